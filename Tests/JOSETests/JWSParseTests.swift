import Support
import Cryptography
import JOSE
import JSON
import XCTest

final class JWSParseTests: XCTestCase {
    func testParsesParts() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let compact = try JWS.sign(payload: ["iss": "https://ta.example", "iat": 1], key: key, algorithm: .ES256,
                                   keyID: "k1", type: "entity-statement+jwt", extraHeader: ["x": true])
        let jws = try JWS.parse(compact)
        XCTAssertEqual(jws.compact, compact)
        XCTAssertEqual(jws.algorithm, "ES256")
        XCTAssertEqual(jws.keyID, "k1")
        XCTAssertEqual(jws.type, "entity-statement+jwt")
        XCTAssertEqual(jws.header["x"], true)
        XCTAssertEqual(try jws.payload(), ["iss": "https://ta.example", "iat": 1])
        XCTAssertEqual(String(decoding: jws.payloadBytes, as: UTF8.self), #"{"iat":1,"iss":"https://ta.example"}"#)
        XCTAssertEqual(jws.signingInput, Array(compact.split(separator: ".").prefix(2).joined(separator: ".").utf8))
        XCTAssertEqual(jws.signature.count, 64)
    }

    func testSignCannotBeToldADifferentAlgByExtraHeader() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let compact = try JWS.sign(payload: [:], key: key, algorithm: .ES256, keyID: "k", type: nil, extraHeader: ["alg": "none"])
        XCTAssertEqual(try JWS.parse(compact).algorithm, "ES256")
        XCTAssertNil(try JWS.parse(compact).type)
    }

    func testSignRefusesKeyThatDoesNotFit() throws {
        let key = try PrivateKey(generatingFor: .ES384)
        assertJOSEError(.keyAlgorithmMismatch, try JWS.sign(payload: [:], key: key, algorithm: .ES256, keyID: "k", type: nil))
    }

    func testMalformedInputs() {
        let header = Base64URL.encode(Array(#"{"alg":"ES256"}"#.utf8))
        let payload = Base64URL.encode(Array("{}".utf8))
        let cases: [String] = [
            "",
            "abc",
            "\(header).\(payload)",
            "\(header).\(payload).AAAA.AAAA",
            ".\(payload).AAAA",
            "\(header)=.\(payload).AAAA",
            "\(header).\(payload)==.AAAA",
            "\(header).\(payload).AA AA",
            "\(header).\(payload).AA+A",
            Base64URL.encode(Array("[1]".utf8)) + ".\(payload).AAAA",
            Base64URL.encode(Array("not json".utf8)) + ".\(payload).AAAA",
            Base64URL.encode(Array(#"{"alg":"ES256","alg":"none"}"#.utf8)) + ".\(payload).AAAA",
        ]
        for compact in cases {
            XCTAssertThrowsError(try JWS.parse(compact), compact) { error in
                guard case .malformed = error as? JOSEError else { return XCTFail("\(compact): \(error)") }
            }
        }
    }

    func testOversizedInputIsRefused() {
        let big = String(repeating: "A", count: JWS.maximumCompactLength + 1)
        XCTAssertThrowsError(try JWS.parse("eyJhbGciOiJFUzI1NiJ9.\(big).AAAA")) { error in
            guard case .malformed = error as? JOSEError else { return XCTFail("\(error)") }
        }
    }

    func testPayloadMustBeAnObject() throws {
        for payload in ["[1,2]", "\"text\"", "not json", ""] {
            let compact = "eyJhbGciOiJFUzI1NiJ9." + Base64URL.encode(Array(payload.utf8)) + ".AAAA"
            let jws = try JWS.parse(compact)
            XCTAssertThrowsError(try jws.payload(), payload) { error in
                guard case .malformed = error as? JOSEError else { return XCTFail("\(error)") }
            }
        }
    }
}
