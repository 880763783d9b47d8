import Cryptography
import JOSE
import JSON
import Support
import XCTest

final class JWKTests: XCTestCase {
    func testRFC7638Thumbprint() throws {
        let key = try jwk(RFCVectors.rfc7638Key)
        XCTAssertEqual(key.thumbprint(), RFCVectors.rfc7638Thumbprint)
        XCTAssertEqual(key.kid, "2011-04-29")
        XCTAssertEqual(key.algorithm, "RS256")
        XCTAssertEqual(key.kty, "RSA")
        // The RFC key is 2048 bits, so it also imports and fits RS256.
        XCTAssertTrue(try key.publicKey().fits(.RS256))
    }

    func testRFC8037Thumbprint() throws {
        XCTAssertEqual(try jwk(RFCVectors.rfc8037Key).thumbprint(), RFCVectors.rfc8037Thumbprint)
    }

    /// The thumbprint written out directly is RFC 7638 §3's input: the required members,
    /// sorted, as the JSON serializer writes them (an EC key here; the RFC vectors are RSA, OKP).
    func testECThumbprintIsTheSortedRequiredMembers() throws {
        let key = try jwk(RFCVectors.rfc7515A3Key)
        var required: [String: JSONValue] = [:]
        for name in ["crv", "kty", "x", "y"] { required[name] = key.json[name] }
        XCTAssertEqual(key.thumbprint(), Base64URL.encode(Digest.sha256(JSONValue.object(required).bytes)))
    }

    /// keyMembersOnly keeps exactly the key (as JWK(json:) would accept it) and drops the rest.
    func testKeyMembersOnly() throws {
        for source in [RFCVectors.rfc7515A3Key, RFCVectors.rfc7638Key, RFCVectors.rfc8037Key] {
            let decorated = try jwk(source).adding(["kid": "k1", "use": "sig", "alg": "ES256", "x5c": ["AAAA"], "exp": 1])
            let bare = decorated.keyMembersOnly
            XCTAssertEqual(Set(bare.json.keys), Set(decorated.json.keys).intersection(["kty", "crv", "x", "y", "n", "e"]))
            XCTAssertEqual(bare, try JWK(json: bare.json))
            XCTAssertEqual(bare.thumbprint(), decorated.thumbprint())
        }
    }

    func testThumbprintIgnoresNonRequiredMembers() throws {
        let plain = try jwk(RFCVectors.rfc7515A3Key)
        let decorated = plain.adding(["kid": "k1", "use": "sig", "alg": "ES256", "exp": 1_700_000_000])
        XCTAssertEqual(plain.thumbprint(), decorated.thumbprint())
        XCTAssertEqual(decorated.kid, "k1")
        XCTAssertEqual(decorated.json["exp"], .int(1_700_000_000))
    }

    func testRoundTripFromPublicKey() throws {
        for algorithm in SignatureAlgorithm.allCases {
            let key = try PrivateKey(generatingFor: algorithm)
            let made = JWK(publicKey: key.publicKey, algorithm: algorithm)
            XCTAssertEqual(made.kid, made.thumbprint())
            XCTAssertEqual(made.algorithm, algorithm.rawValue)
            XCTAssertEqual(made.json["use"], "sig")
            XCTAssertNil(made.json["d"])
            let reparsed = try JWK(json: XCTUnwrap(JSONValue.parse(made.jsonValue.serialized()).objectValue))
            XCTAssertEqual(reparsed, made)
            XCTAssertEqual(try reparsed.publicKey().components, key.publicKey.components)
        }
        let bare = JWK(publicKey: try PrivateKey(generatingFor: .ES256).publicKey, use: nil)
        XCTAssertNil(bare.json["use"])
        XCTAssertNil(bare.json["alg"])
    }

    func testKTYAndCurveMembers() throws {
        let ec = JWK(publicKey: try PrivateKey(generatingFor: .ES384).publicKey)
        XCTAssertEqual(ec.kty, "EC")
        XCTAssertEqual(ec.json["crv"], "P-384")
        let okp = JWK(publicKey: try PrivateKey(generatingFor: .EdDSA).publicKey)
        XCTAssertEqual(okp.kty, "OKP")
        XCTAssertEqual(okp.json["crv"], "Ed25519")
    }

    func testPrivateMembersAreRejected() throws {
        let withD = """
            {"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","d":"jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"}
            """
        assertJOSEError(.invalidKey("private key member \"d\" in a public JWK"), try jwk(withD))
        for member in ["p", "q", "dp", "dq", "qi"] {
            var json = try XCTUnwrap(JSONValue.parse(RFCVectors.rfc7638Key).objectValue)
            json[member] = "AQAB"
            XCTAssertThrowsError(try JWK(json: json), member)
        }
        assertJOSEError(.invalidKey("private key member \"k\" in a public JWK"), try jwk(#"{"kty":"oct","k":"AQAB"}"#))
        assertJOSEError(.invalidKey("symmetric (oct) keys are not accepted"), try jwk(#"{"kty":"oct"}"#))
    }

    func testAddingCannotChangeKeyMaterial() throws {
        let key = try jwk(RFCVectors.rfc7515A3Key)
        let changed = key.adding(["d": "AAAA", "x": "AAAA", "kty": "RSA", "revoked": ["reason": "keyCompromise"]])
        XCTAssertNil(changed.json["d"])
        XCTAssertEqual(changed.json["x"], key.json["x"])
        XCTAssertEqual(changed.kty, "EC")
        XCTAssertNotNil(changed.json["revoked"])
    }

    func testMalformedKeysAreRejected() {
        let x = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"
        let y = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
        let bad = [
            #"{}"#,
            #"{"kty":1}"#,
            #"{"kty":"DSA"}"#,
            #"{"kty":"EC","crv":"P-256","x":"\#(x)"}"#,
            #"{"kty":"EC","crv":"P-384","x":"\#(x)","y":"\#(y)"}"#,
            #"{"kty":"EC","crv":"secp256k1","x":"\#(x)","y":"\#(y)"}"#,
            #"{"kty":"EC","crv":"P-256","x":"\#(x)=","y":"\#(y)"}"#,
            #"{"kty":"EC","crv":"P-256","x":"\#(x)","y":"\#(y)","kid":5}"#,
            #"{"kty":"EC","crv":"P-256","x":"\#(x)","y":"\#(y)","key_ops":"verify"}"#,
            #"{"kty":"OKP","crv":"X25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#,
            #"{"kty":"OKP","crv":"Ed25519","x":"AQAB"}"#,
            #"{"kty":"RSA","e":"AQAB"}"#,
            #"{"kty":"RSA","n":"","e":"AQAB"}"#,
        ]
        for text in bad {
            XCTAssertThrowsError(try jwk(text), text)
        }
    }

    func testPublicKeyRejectsPointOffCurve() throws {
        // Well-formed members, but y belongs to a different point.
        let key = try jwk(#"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRjmZ8qz7P48m-zMPbJf1g7wMJlQ4OfHSNmHA0k"}"#)
        XCTAssertThrowsError(try key.publicKey()) { error in
            guard case .invalidKey = error as? JOSEError else { return XCTFail("\(error)") }
        }
    }
}
