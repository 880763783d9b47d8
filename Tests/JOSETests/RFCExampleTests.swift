import Cryptography
import JOSE
import JSON
import XCTest

/// Verification of signatures made by other implementations, as published in the RFCs.
final class RFCExampleTests: XCTestCase {
    /// RFC 7515 A.3. The header has no kid or typ, and the payload (a JSON object written with
    /// CRLF whitespace) must be verified over its exact bytes.
    func testRFC7515AppendixA3ES256() throws {
        let jws = try JWS.parse(RFCVectors.rfc7515A3JWS)
        let key = try jwk(RFCVectors.rfc7515A3Key)
        let verified = try jws.verify(keys: JWKSet(keys: [key]), allowList: [.ES256], expectedType: nil, requireKeyID: false)
        XCTAssertEqual(verified, key)
        let payload = try jws.payload()
        XCTAssertEqual(payload["iss"], "joe")
        XCTAssertEqual(payload["exp"], .int(1_300_819_380))
        XCTAssertEqual(payload["http://example.com/is_root"], true)
        XCTAssertTrue(try key.publicKey().verify(signature: jws.signature, data: jws.signingInput, algorithm: .ES256))
        XCTAssertFalse(try key.publicKey().verify(signature: jws.signature, data: jws.signingInput + [0x20], algorithm: .ES256))
        // Required kid is absent in the example.
        assertJOSEError(.missingKeyID, try jws.verify(keys: JWKSet(keys: [key]), allowList: [.ES256], expectedType: nil))
    }

    /// RFC 8037 A.4: Ed25519 over a payload that is not JSON, so only the signature is checked.
    func testRFC8037AppendixA4EdDSA() throws {
        let jws = try JWS.parse(RFCVectors.rfc8037JWS)
        let key = try jwk(RFCVectors.rfc8037Key)
        XCTAssertEqual(jws.algorithm, "EdDSA")
        XCTAssertEqual(String(decoding: jws.payloadBytes, as: UTF8.self), "Example of Ed25519 signing")
        XCTAssertTrue(try key.publicKey().verify(signature: jws.signature, data: jws.signingInput, algorithm: .EdDSA))
        XCTAssertEqual(try jws.verify(keys: JWKSet(keys: [key]), allowList: [.EdDSA], expectedType: nil, requireKeyID: false), key)
    }
}
