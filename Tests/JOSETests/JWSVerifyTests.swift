import Support
import Cryptography
import JOSE
import JSON
import XCTest

final class JWSVerifyTests: XCTestCase {
    let typ = "entity-statement+jwt"

    func testEachAlgorithmVerifies() throws {
        for algorithm in SignatureAlgorithm.allCases {
            let key = try PrivateKey(generatingFor: algorithm)
            let jwk = JWK(publicKey: key.publicKey, algorithm: algorithm)
            let compact = try JWS.sign(payload: ["sub": "x"], key: key, algorithm: algorithm, keyID: jwk.kid!, type: typ)
            let verified = try JWS.parse(compact).verify(keys: JWKSet(keys: [jwk]), allowList: AlgorithmPolicy.federationDefault, expectedType: typ)
            XCTAssertEqual(verified, jwk, "\(algorithm)")
        }
    }

    func testES256SignatureIs64Bytes() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let compact = try JWS.sign(payload: [:], key: key, algorithm: .ES256, keyID: "k", type: nil)
        XCTAssertEqual(try JWS.parse(compact).signature.count, 64)
    }

    func testTamperedPayloadOrSignatureFails() throws {
        let (key, keys) = try Self.keyPair(.ES256)
        let compact = try JWS.sign(payload: ["sub": "alice"], key: key, algorithm: .ES256, keyID: "k", type: typ)
        let parts = compact.split(separator: ".").map(String.init)
        let otherPayload = Base64URL.encode(JSONValue.object(["sub": "mallory"]).bytes)
        assertJOSEError(.invalidSignature, try verify("\(parts[0]).\(otherPayload).\(parts[2])", keys))
        var signature = try XCTUnwrap(Base64URL.decode(parts[2]))
        signature[10] ^= 1
        assertJOSEError(.invalidSignature, try verify("\(parts[0]).\(parts[1]).\(Base64URL.encode(signature))", keys))
        XCTAssertNoThrow(try verify(compact, keys))
    }

    func testDERSignatureIsRejected() throws {
        let (key, keys) = try Self.keyPair(.ES256)
        let compact = try JWS.sign(payload: [:], key: key, algorithm: .ES256, keyID: "k", type: typ)
        let parts = compact.split(separator: ".").map(String.init)
        let raw = try XCTUnwrap(Base64URL.decode(parts[2]))
        let der = Self.derEncode(r: Array(raw[..<32]), s: Array(raw[32...]))
        assertJOSEError(.invalidSignature, try verify("\(parts[0]).\(parts[1]).\(Base64URL.encode(der))", keys))
    }

    func testKeyMustFitAlgorithm() throws {
        // A P-384 key published under the kid the ES256 token names.
        let p256 = try PrivateKey(generatingFor: .ES256)
        let p384 = JWK(publicKey: try PrivateKey(generatingFor: .ES384).publicKey).adding(["kid": "k"])
        let compact = try JWS.sign(payload: [:], key: p256, algorithm: .ES256, keyID: "k", type: typ)
        assertJOSEError(.keyAlgorithmMismatch, try verify(compact, JWKSet(keys: [p384])))
        // Ed25519 and RSA keys do not fit ES256 either.
        let ed = JWK(publicKey: try PrivateKey(generatingFor: .EdDSA).publicKey).adding(["kid": "k"])
        assertJOSEError(.keyAlgorithmMismatch, try verify(compact, JWKSet(keys: [ed])))
    }

    func testJWKAlgMemberMustMatchHeader() throws {
        let key = try PrivateKey(generatingFor: .RS256)
        let jwk = JWK(publicKey: key.publicKey, algorithm: .PS256).adding(["kid": "k"])
        let compact = try JWS.sign(payload: [:], key: key, algorithm: .RS256, keyID: "k", type: typ)
        assertJOSEError(.keyAlgorithmMismatch, try verify(compact, JWKSet(keys: [jwk])))
        let encryptionKey = JWK(publicKey: key.publicKey, use: "enc").adding(["kid": "k"])
        assertJOSEError(.keyAlgorithmMismatch, try verify(compact, JWKSet(keys: [encryptionKey])))
    }

    func testAlgNoneAndSymmetricAlgorithmsAreRejected() throws {
        let (_, keys) = try Self.keyPair(.ES256)
        assertJOSEError(.unsupportedAlgorithm("none"),
                        try verify(TokenForge.compact(header: ["alg": "none", "kid": "k", "typ": .string(typ)], signature: []), keys))
        assertJOSEError(.unsupportedAlgorithm("HS256"),
                        try verify(TokenForge.compact(header: ["alg": "HS256", "kid": "k", "typ": .string(typ)]), keys))
        assertJOSEError(.unsupportedAlgorithm("ES256K"),
                        try verify(TokenForge.compact(header: ["alg": "ES256K", "kid": "k", "typ": .string(typ)]), keys))
        assertJOSEError(.unsupportedAlgorithm("es256"),
                        try verify(TokenForge.compact(header: ["alg": "es256", "kid": "k", "typ": .string(typ)]), keys))
        assertJOSEError(.malformed("missing alg header"),
                        try verify(TokenForge.compact(header: ["kid": "k", "typ": .string(typ)]), keys))
        assertJOSEError(.malformed("alg must be a string"),
                        try verify(TokenForge.compact(header: ["alg": 1, "kid": "k"]), keys))
    }

    func testAllowListIsEnforced() throws {
        let (key, keys) = try Self.keyPair(.RS256)
        let compact = try JWS.sign(payload: [:], key: key, algorithm: .RS256, keyID: "k", type: typ)
        assertJOSEError(.unsupportedAlgorithm("RS256"),
                        try JWS.parse(compact).verify(keys: keys, allowList: [.ES256, .PS256], expectedType: typ))
    }

    func testKeySupplyingHeadersAreForbidden() throws {
        let (key, keys) = try Self.keyPair(.ES256)
        let ownJWK = JWK(publicKey: key.publicKey).jsonValue
        for (name, value) in [("jwk", ownJWK), ("jku", "https://evil.example/jwks"), ("x5u", "https://evil.example/cert")] {
            let compact = try TokenForge.signed(["kid": "k", "typ": .string(typ), name: value], key: key, algorithm: .ES256)
            assertJOSEError(.forbiddenHeader(name), try verify(compact, keys))
        }
    }

    func testCriticalHeaders() throws {
        let (key, keys) = try Self.keyPair(.ES256)
        let unknown = try TokenForge.signed(["kid": "k", "typ": .string(typ), "crit": ["exp"], "exp": 1], key: key, algorithm: .ES256)
        assertJOSEError(.forbiddenHeader("crit \"exp\""), try verify(unknown, keys))
        XCTAssertNoThrow(try JWS.parse(unknown).verify(keys: keys, allowList: [.ES256], expectedType: typ, understoodCritical: ["exp"]))

        let empty = try TokenForge.signed(["kid": "k", "typ": .string(typ), "crit": []], key: key, algorithm: .ES256)
        assertJOSEError(.malformed("crit must be a non-empty array of strings"), try verify(empty, keys))
        let absent = try TokenForge.signed(["kid": "k", "typ": .string(typ), "crit": ["exp"]], key: key, algorithm: .ES256)
        assertJOSEError(.malformed("crit lists absent header \"exp\""),
                        try JWS.parse(absent).verify(keys: keys, allowList: [.ES256], expectedType: typ, understoodCritical: ["exp"]))
        let unencoded = try TokenForge.signed(["kid": "k", "typ": .string(typ), "b64": false, "crit": ["b64"]], key: key, algorithm: .ES256)
        assertJOSEError(.forbiddenHeader("b64"), try verify(unencoded, keys))
    }

    func testTypeIsChecked() throws {
        let (key, keys) = try Self.keyPair(.ES256)
        let wrong = try JWS.sign(payload: [:], key: key, algorithm: .ES256, keyID: "k", type: "JWT")
        assertJOSEError(.typeMismatch(expected: typ, actual: "JWT"), try verify(wrong, keys))
        let missing = try JWS.sign(payload: [:], key: key, algorithm: .ES256, keyID: "k", type: nil)
        assertJOSEError(.typeMismatch(expected: typ, actual: nil), try verify(missing, keys))
        // No expectation: any typ passes.
        XCTAssertNoThrow(try JWS.parse(missing).verify(keys: keys, allowList: [.ES256], expectedType: nil))

        // RFC 7515 §4.1.9: case-insensitive, "application/" implied.
        for variant in ["Entity-Statement+JWT", "application/entity-statement+jwt", "APPLICATION/entity-statement+jwt"] {
            let token = try JWS.sign(payload: [:], key: key, algorithm: .ES256, keyID: "k", type: variant)
            XCTAssertNoThrow(try verify(token, keys), variant)
        }
        // Media types are ASCII: a canonically equivalent non-ASCII spelling (U+212A KELVIN SIGN
        // for "K", equal as Swift Strings) is another type.
        let kelvin = try JWS.sign(payload: [:], key: key, algorithm: .ES256, keyID: "k", type: "\u{212A}ID")
        assertJOSEError(.typeMismatch(expected: "KID", actual: "\u{212A}ID"),
                        try JWS.parse(kelvin).verify(keys: keys, allowList: [.ES256], expectedType: "KID"))
        let otherTree = try JWS.sign(payload: [:], key: key, algorithm: .ES256, keyID: "k", type: "text/entity-statement+jwt")
        assertJOSEError(.typeMismatch(expected: typ, actual: "text/entity-statement+jwt"), try verify(otherTree, keys))
    }

    func testKeyIDHandling() throws {
        let (key, keys) = try Self.keyPair(.ES256)
        let unknown = try JWS.sign(payload: [:], key: key, algorithm: .ES256, keyID: "other", type: typ)
        assertJOSEError(.unknownKeyID("other"), try verify(unknown, keys))

        let noKid = try TokenForge.signed(["typ": .string(typ)], key: key, algorithm: .ES256)
        assertJOSEError(.missingKeyID, try verify(noKid, keys))
        // Without kid (when allowed) every key is tried.
        let decoy = JWK(publicKey: try PrivateKey(generatingFor: .ES256).publicKey)
        let ed = JWK(publicKey: try PrivateKey(generatingFor: .EdDSA).publicKey)
        let found = try JWS.parse(noKid).verify(keys: JWKSet(keys: [ed, decoy] + keys.keys), allowList: [.ES256],
                                                expectedType: typ, requireKeyID: false)
        XCTAssertEqual(found.kid, "k")
        assertJOSEError(.invalidSignature, try JWS.parse(noKid).verify(keys: JWKSet(keys: [decoy]), allowList: [.ES256],
                                                                       expectedType: typ, requireKeyID: false))
        assertJOSEError(.keyAlgorithmMismatch, try JWS.parse(noKid).verify(keys: JWKSet(keys: [ed]), allowList: [.ES256],
                                                                           expectedType: typ, requireKeyID: false))
        let numericKid = try TokenForge.signed(["kid": 7, "typ": .string(typ)], key: key, algorithm: .ES256)
        assertJOSEError(.malformed("kid must be a string"), try verify(numericKid, keys))
    }

    func testDuplicateKidTriesEachCandidate() throws {
        let (key, keys) = try Self.keyPair(.ES256)
        let stale = JWK(publicKey: try PrivateKey(generatingFor: .ES256).publicKey).adding(["kid": "k"])
        let compact = try JWS.sign(payload: [:], key: key, algorithm: .ES256, keyID: "k", type: typ)
        XCTAssertEqual(try verify(compact, JWKSet(keys: [stale] + keys.keys)), keys.keys[0])
    }

    func testEmbeddedKeyVerification() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let ownJWK = JWK(publicKey: key.publicKey, use: nil)
        let proof = try TokenForge.signed(["typ": "openid4vci-proof+jwt", "jwk": ownJWK.jsonValue], key: key, algorithm: .ES256)
        let jws = try JWS.parse(proof)
        XCTAssertEqual(try jws.verifyWithEmbeddedKey(allowList: [.ES256], expectedType: "openid4vci-proof+jwt"), ownJWK)
        // The key-returning form gives the same JWK and the OpenSSL key it verified with.
        let verified = try jws.verifyWithEmbeddedPublicKey(allowList: [.ES256], expectedType: "openid4vci-proof+jwt")
        XCTAssertEqual(verified.jwk, ownJWK)
        XCTAssertEqual(verified.publicKey, key.publicKey)
        assertJOSEError(.unsupportedAlgorithm("ES256"), try jws.verifyWithEmbeddedPublicKey(allowList: [.EdDSA], expectedType: nil))
        // It still refuses what verify(keys:) refuses, and a private key in the header.
        assertJOSEError(.unsupportedAlgorithm("ES256"), try jws.verifyWithEmbeddedKey(allowList: [.EdDSA], expectedType: nil))
        let other = JWK(publicKey: try PrivateKey(generatingFor: .ES256).publicKey, use: nil)
        let swapped = try TokenForge.signed(["jwk": other.jsonValue], key: key, algorithm: .ES256)
        assertJOSEError(.invalidSignature, try JWS.parse(swapped).verifyWithEmbeddedKey(allowList: [.ES256], expectedType: nil))
        let viaJKU = try TokenForge.signed(["jwk": ownJWK.jsonValue, "jku": "https://x"], key: key, algorithm: .ES256)
        assertJOSEError(.forbiddenHeader("jku"), try JWS.parse(viaJKU).verifyWithEmbeddedKey(allowList: [.ES256], expectedType: nil))
        let privateJWK = JSONValue.object(ownJWK.json.merging(["d": "AAAA"]) { $1 })
        let withD = try TokenForge.signed(["jwk": privateJWK], key: key, algorithm: .ES256)
        XCTAssertThrowsError(try JWS.parse(withD).verifyWithEmbeddedKey(allowList: [.ES256], expectedType: nil))
    }

    /// Every one-character change to a valid token must fail to verify; with canonical base64url
    /// there is no second spelling of the same bytes.
    func testNoSingleCharacterMutationVerifies() throws {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
        for algorithm in [SignatureAlgorithm.ES256, .EdDSA] {
            let (key, keys) = try Self.keyPair(algorithm)
            let compact = Array(try JWS.sign(payload: ["a": 1], key: key, algorithm: algorithm, keyID: "k", type: typ))
            for i in compact.indices {
                var mutated = compact
                mutated[i] = alphabet[(alphabet.firstIndex(of: compact[i])! + 7) % alphabet.count]
                XCTAssertThrowsError(try verify(String(mutated), keys), "position \(i)")
            }
        }
    }

    // MARK: helpers

    private func verify(_ compact: String, _ keys: JWKSet) throws -> JWK {
        try JWS.parse(compact).verify(keys: keys, allowList: AlgorithmPolicy.federationDefault, expectedType: typ)
    }

    private static func keyPair(_ algorithm: SignatureAlgorithm) throws -> (PrivateKey, JWKSet) {
        let key = try PrivateKey(generatingFor: algorithm)
        return (key, JWKSet(keys: [JWK(publicKey: key.publicKey, algorithm: algorithm).adding(["kid": "k"])]))
    }

    private static func derEncode(r: [UInt8], s: [UInt8]) -> [UInt8] {
        func integer(_ v: [UInt8]) -> [UInt8] {
            var v = Array(v.drop(while: { $0 == 0 }))
            if v.isEmpty || v[0] & 0x80 != 0 { v.insert(0, at: 0) }
            return [0x02, UInt8(v.count)] + v
        }
        let body = integer(r) + integer(s)
        return [0x30, UInt8(body.count)] + body
    }
}
