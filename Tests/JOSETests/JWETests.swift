import Support
import Cryptography
import Foundation
import JOSE
import JSON
import XCTest
import TestSupport

/// JWE compact with ECDH-ES + AES-GCM: the RFC 7518 Appendix C derivation, round trips, strict
/// header checks, tampering, and interop with joserfc.
final class JWETests: XCTestCase {
    private func recipient(_ curve: String = "P-256") throws -> (PrivateKey, JWK) {
        let key = try PrivateKey(generatingECCurve: curve)
        return (key, JWK(publicKey: key.publicKey, use: "enc"))
    }

    /// Assert `body` throws exactly `expected`.
    private func assertJWEError<T>(_ expected: JWEError, _ body: @autoclosure () throws -> T, line: UInt = #line) {
        XCTAssertThrowsError(try body(), line: line) { XCTAssertEqual($0 as? JWEError, expected, line: line) }
    }

    /// Rewrites the protected header of a valid JWE, keeping every other part.
    private func reheader(_ compact: String, _ change: (inout [String: JSONValue]) -> Void) throws -> JWE {
        var parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var header = try JWE.parse(compact).header
        change(&header)
        parts[0] = Base64URL.encode(JSONValue.object(header).bytes)
        return try JWE.parse(parts.joined(separator: "."))
    }

    func testRFC7518AppendixCDerivation() throws {
        let alice = try PrivateKey(
            ecCurve: "P-256", d: Base64URL.decode("0_NxaRPUMQoAJt50Gz8YiTr8gRTwyEaCumd-MToTmIo")!,
            x: Base64URL.decode("gI0GAILBdu7T53akrFmMyGcsF3n5dO7MmwNBHKW5SV0")!,
            y: Base64URL.decode("SLW_xSffzlPWrHEVI30DHM_4egVwt3NQqeUD7nMFpps")!)
        let bob = try jwk(#"{"kty":"EC","crv":"P-256","x":"weNJy2HscCSM6AEDTDg04biOvhFhyyWvOHQfeF_PxMQ","y":"e8lnCO-AlStT-NJVX-crhB7QRYhiix03illJOVAOyck"}"#)
        let z = try alice.sharedSecret(with: bob.publicKey())
        let key = try JWE.contentKey(sharedSecret: z, encryption: .A128GCM, apu: Array("Alice".utf8), apv: Array("Bob".utf8))
        XCTAssertEqual(Base64URL.encode(key), "VqqN6vgjbSBcIijNcacQGg")
    }

    func testRoundTripOnEveryCurveAndEncryption() throws {
        for curve in ["P-256", "P-384", "P-521"] {
            for enc in JWEContentEncryption.allCases {
                let (key, jwk) = try recipient(curve)
                let message = Array("credential \(curve) \(enc)".utf8)
                let compact = try JWE.encrypt(message, to: jwk, encryption: enc, agreementPartyUInfo: [1, 2], agreementPartyVInfo: [3],
                                              extraHeader: ["typ": "JWT"])
                let jwe = try JWE.parse(compact)
                XCTAssertEqual(jwe.algorithm, "ECDH-ES")
                XCTAssertEqual(jwe.encryption, enc.rawValue)
                XCTAssertEqual(jwe.keyID, jwk.kid)
                XCTAssertEqual(jwe.header["typ"], "JWT")
                XCTAssertEqual(jwe.header["apu"], "AQI")
                XCTAssertEqual(jwe.header["epk"]?["crv"]?.stringValue, curve)
                XCTAssertNil(jwe.header["epk"]?["d"])
                XCTAssertEqual(jwe.encryptedKey, [])
                XCTAssertEqual(try jwe.decrypt(with: key), message)
            }
        }
        // Fresh ephemeral key and IV every time.
        let (_, jwk) = try recipient()
        let a = try JWE.parse(JWE.encrypt([1], to: jwk, encryption: .A128GCM))
        let b = try JWE.parse(JWE.encrypt([1], to: jwk, encryption: .A128GCM))
        XCTAssertNotEqual(a.header["epk"], b.header["epk"])
        XCTAssertNotEqual(a.initializationVector, b.initializationVector)
        XCTAssertNil(a.header["apu"])
    }

    func testTamperingAndWrongKeyFail() throws {
        let (key, jwk) = try recipient()
        let compact = try JWE.encrypt(Array("secret".utf8), to: jwk, encryption: .A256GCM, keyID: "k1")
        var parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for index in [2, 3, 4] {
            var copy = parts
            var bytes = Base64URL.decode(copy[index])!
            bytes[0] ^= 1
            copy[index] = Base64URL.encode(bytes)
            assertJWEError(.decryptionFailed, try JWE.parse(copy.joined(separator: ".")).decrypt(with: key))
        }
        // A header change that passes every check still breaks the AAD.
        assertJWEError(.decryptionFailed, try reheader(compact) { $0["kid"] = "k2" }.decrypt(with: key))
        let (other, _) = try recipient()
        assertJWEError(.decryptionFailed, try JWE.parse(compact).decrypt(with: other))
        // Only the allowed encryptions.
        assertJWEError(.unsupportedEncryption("A256GCM"), try JWE.parse(compact).decrypt(with: key, allowed: [.A128GCM]))
        parts[1] = Base64URL.encode([1, 2, 3])
        assertJWEError(.malformed("ECDH-ES requires an empty encrypted key"), try JWE.parse(parts.joined(separator: ".")).decrypt(with: key))
    }

    func testStrictHeaderChecks() throws {
        let (key, jwk) = try recipient()
        let compact = try JWE.encrypt([42], to: jwk, encryption: .A128GCM)
        assertJWEError(.unsupportedAlgorithm("ECDH-ES+A128KW"), try reheader(compact) { $0["alg"] = "ECDH-ES+A128KW" }.decrypt(with: key))
        assertJWEError(.unsupportedAlgorithm("dir"), try reheader(compact) { $0["alg"] = "dir" }.decrypt(with: key))
        assertJWEError(.malformed("missing alg header"), try reheader(compact) { $0["alg"] = nil }.decrypt(with: key))
        assertJWEError(.unsupportedEncryption("A128CBC-HS256"), try reheader(compact) { $0["enc"] = "A128CBC-HS256" }.decrypt(with: key))
        assertJWEError(.unsupportedEncryption("A192GCM"), try reheader(compact) { $0["enc"] = "A192GCM" }.decrypt(with: key))
        assertJWEError(.unsupportedHeader("zip"), try reheader(compact) { $0["zip"] = "DEF" }.decrypt(with: key))
        assertJWEError(.unsupportedHeader("crit"), try reheader(compact) { $0["crit"] = ["exp"] }.decrypt(with: key))
        assertJWEError(.invalidEphemeralKey("missing epk header"), try reheader(compact) { $0["epk"] = nil }.decrypt(with: key))
        assertJWEError(.invalidEphemeralKey("epk must be a JSON object"), try reheader(compact) { $0["epk"] = "x" }.decrypt(with: key))
        assertJWEError(.malformed("apu must be a base64url string"), try reheader(compact) { $0["apu"] = 5 }.decrypt(with: key))

        // epk on another curve than our key.
        let p384 = try PrivateKey(generatingECCurve: "P-384")
        let wrongCurve = JWK(publicKey: p384.publicKey, use: nil).jsonValue
        assertJWEError(.invalidEphemeralKey("epk is not on P-256"), try reheader(compact) { $0["epk"] = wrongCurve }.decrypt(with: key))
        // A point off the curve (invalid-curve attacks, RFC 7516 §11.5 / JWA §4.6).
        let header = try JWE.parse(compact).header
        var epk = try XCTUnwrap(header["epk"]?.objectValue)
        var y = Base64URL.decode(epk["y"]!.stringValue!)!
        y[31] ^= 1
        epk["y"] = .string(Base64URL.encode(y))
        let offCurve = JSONValue.object(epk)
        XCTAssertThrowsError(try reheader(compact) { $0["epk"] = offCurve }.decrypt(with: key)) {
            guard case .invalidEphemeralKey = $0 as? JWEError else { return XCTFail("\($0)") }
        }
        // An epk that carries a private key, or an OKP key, is refused.
        var withD = try XCTUnwrap(header["epk"]?.objectValue)
        withD["d"] = .string(Base64URL.encode([UInt8](repeating: 1, count: 32)))
        let privateEPK = JSONValue.object(withD)
        XCTAssertThrowsError(try reheader(compact) { $0["epk"] = privateEPK }.decrypt(with: key))
        let ed = JWK(publicKey: try PrivateKey(generatingFor: .EdDSA).publicKey, use: nil).jsonValue
        XCTAssertThrowsError(try reheader(compact) { $0["epk"] = ed }.decrypt(with: key))

        // Structure.
        assertJWEError(.malformed("compact JWE must have 5 parts, found 3"), try JWE.parse("a.b.c"))
        assertJWEError(.malformed("header is not a JSON object"), try JWE.parse(Base64URL.encode(Array("[]".utf8)) + "....."
            .dropLast()))
        // A non-EC private key cannot decrypt.
        assertJWEError(.invalidKey("ECDH-ES needs an EC private key"), try JWE.parse(compact).decrypt(with: PrivateKey(generatingFor: .EdDSA)))
    }

    func testEncryptRefusesUnsuitableRecipientsAndHeaders() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        assertJWEError(.invalidKey("recipient key has use \"sig\""),
                       try JWE.encrypt([1], to: JWK(publicKey: key.publicKey), encryption: .A128GCM))
        let withAlg = JWK(publicKey: key.publicKey, use: nil).adding(["alg": "RSA-OAEP"])
        assertJWEError(.invalidKey("recipient key is for alg \"RSA-OAEP\""), try JWE.encrypt([1], to: withAlg, encryption: .A128GCM))
        let ed = JWK(publicKey: try PrivateKey(generatingFor: .EdDSA).publicKey, use: nil)
        assertJWEError(.invalidKey("ECDH-ES needs an EC recipient key"), try JWE.encrypt([1], to: ed, encryption: .A128GCM))
        let enc = JWK(publicKey: key.publicKey, use: "enc")
        assertJWEError(.unsupportedHeader("zip"), try JWE.encrypt([1], to: enc, encryption: .A128GCM, extraHeader: ["zip": "DEF"]))
        assertJWEError(.unsupportedHeader("alg"), try JWE.encrypt([1], to: enc, encryption: .A128GCM, extraHeader: ["alg": "dir"]))
    }

    /// joserfc decrypts what we encrypt (with our PKCS#8 key) and encrypts to our public key
    /// for us to decrypt, for both content encryptions and with apu/apv.
    func testInteroperatesWithJoserfc() throws {
        let key = try PrivateKey(generatingECCurve: "P-256")
        let jwk = JWK(publicKey: key.publicKey, use: "enc")
        var ours: [JSONValue] = []
        for enc in JWEContentEncryption.allCases {
            let compact = try JWE.encrypt(Array("from swift \(enc)".utf8), to: jwk, encryption: enc,
                                          agreementPartyUInfo: Array("wallet".utf8), agreementPartyVInfo: Array("issuer".utf8))
            ours.append(["enc": .string(enc.rawValue), "jwe": .string(compact)])
        }
        let input: JSONValue = ["pem": .string(try key.pemPKCS8()), "public": jwk.jsonValue, "tokens": .array(ours)]
        let result = try JSONValue.parse(PythonRunner.run(Self.script, input: input.serialized()))
        XCTAssertEqual(result["decrypted"]?.stringArray?.sorted(), ["from swift A128GCM", "from swift A256GCM"],
                       "joserfc: \(result["errors"] ?? "-")")
        let theirs = try XCTUnwrap(result["tokens"]?.arrayValue)
        XCTAssertEqual(theirs.count, 2)
        for token in theirs {
            let jwe = try JWE.parse(XCTUnwrap(token["jwe"]?.stringValue))
            XCTAssertEqual(String(decoding: try jwe.decrypt(with: key), as: UTF8.self), "from python \(jwe.encryption ?? "?")")
        }
    }

    private static let script = #"""
import sys, json
try:
    from joserfc import jwe
    from joserfc.jwk import ECKey
except ImportError:
    sys.exit(3)

data = json.load(sys.stdin)
private = ECKey.import_key(data["pem"])
public = ECKey.import_key(data["public"])
algorithms = ["ECDH-ES", "A128GCM", "A256GCM"]
decrypted, errors, tokens = [], [], []
for token in data["tokens"]:
    try:
        obj = jwe.decrypt_compact(token["jwe"], private, algorithms=algorithms)
        assert obj.protected["enc"] == token["enc"]
        assert obj.protected["apu"] == "d2FsbGV0"
        decrypted.append(obj.plaintext.decode())
    except Exception as e:
        errors.append(repr(e))
for enc in ["A128GCM", "A256GCM"]:
    header = {"alg": "ECDH-ES", "enc": enc, "apu": "QWxpY2U", "apv": "Qm9i"}
    tokens.append({"jwe": jwe.encrypt_compact(header, ("from python " + enc).encode(), public, algorithms=algorithms)})
print(json.dumps({"decrypted": decrypted, "errors": errors, "tokens": tokens}))
"""#
}
