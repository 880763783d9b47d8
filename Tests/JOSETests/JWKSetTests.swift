import Cryptography
import JOSE
import JSON
import XCTest

final class JWKSetTests: XCTestCase {
    func testRoundTripAndLookup() throws {
        let a = JWK(publicKey: try PrivateKey(generatingFor: .ES256).publicKey)
        let b = JWK(publicKey: try PrivateKey(generatingFor: .EdDSA).publicKey)
        let set = JWKSet(keys: [a, b])
        let parsed = try JWKSet(json: JSONValue.parse(set.jsonValue.serialized()))
        XCTAssertEqual(parsed, set)
        XCTAssertEqual(parsed.key(withID: try XCTUnwrap(b.kid)), b)
        XCTAssertNil(parsed.key(withID: "nope"))
    }

    func testStructureIsChecked() throws {
        assertJOSEError(.malformed("JWK set needs a \"keys\" array"), try JWKSet(json: ["keys": "x"]))
        assertJOSEError(.malformed("JWK set needs a \"keys\" array"), try JWKSet(json: [:]))
        assertJOSEError(.malformed("JWK set needs a \"keys\" array"), try JWKSet(json: [1, 2]))
        assertJOSEError(.malformed("JWK set member is not an object"), try JWKSet(json: ["keys": [1]]))
        XCTAssertEqual(try JWKSet(json: ["keys": []]).keys, [])
    }

    func testSecretsAndMalformedMembersRejectTheSet() throws {
        var withD = try XCTUnwrap(JSONValue.parse(RFCVectors.rfc7515A3Key).objectValue)
        withD["d"] = "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"
        XCTAssertThrowsError(try JWKSet(json: ["keys": [.object(withD)]]))
        XCTAssertThrowsError(try JWKSet(json: ["keys": [["kty": "oct", "k": "AAAA"]]]))
        XCTAssertThrowsError(try JWKSet(json: ["keys": [["kty": "EC", "crv": "P-256"]]]))
    }

    /// RFC 7517 §5: members of key types the implementation does not understand are ignored.
    func testForeignKeyTypesAreSkipped() throws {
        let good = try XCTUnwrap(JSONValue.parse(RFCVectors.rfc8037Key).objectValue)
        let set = try JWKSet(json: ["keys": [
            ["kty": "OKP", "crv": "X25519", "x": "hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo", "use": "enc"],
            ["kty": "EC", "crv": "secp256k1", "x": "AAAA", "y": "AAAA"],
            ["kty": "PQC", "pub": "AAAA"],
            .object(good),
        ]])
        XCTAssertEqual(set.keys.count, 1)
        XCTAssertEqual(set.keys.first?.kty, "OKP")
    }
}
