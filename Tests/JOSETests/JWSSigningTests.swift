import Cryptography
@testable import JOSE
import JSON
import Support
import XCTest

/// The byte-level shortcuts of signing: the usual header written out directly, and a JWK's kid
/// hashed from its members written out directly. Each must give exactly the serializer's bytes.
final class JWSSigningTests: XCTestCase {
    func testPlainHeaderIsTheSerializersHeader() throws {
        for algorithm in SignatureAlgorithm.allCases {
            for type: String? in ["entity-statement+jwt", "resolve-response+jwt", "JWT", nil] {
                let kid = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
                var header: [String: JSONValue] = ["alg": .string(algorithm.rawValue), "kid": .string(kid)]
                if let type { header["typ"] = .string(type) }
                XCTAssertEqual(JWS.plainHeader(algorithm: algorithm, keyID: kid, type: type), JSONValue.object(header).bytes)
            }
        }
        XCTAssertNil(JWS.plainHeader(algorithm: .ES256, keyID: "a\"b", type: nil), "a quote needs escaping")
        XCTAssertNil(JWS.plainHeader(algorithm: .ES256, keyID: "k", type: "a\\b"))
        XCTAssertNil(JWS.plainHeader(algorithm: .ES256, keyID: "k\n", type: nil))
    }

    func testSignedJWSParsesAndVerifiesWithEitherHeaderPath() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let jwk = JWK(publicKey: key.publicKey, algorithm: .ES256)
        for kid in [jwk.kid!, "with \"quotes\" and \\"] {
            let published = JWKSet(keys: [jwk.adding(["kid": .string(kid)])])
            let compact = try JWS.sign(payload: ["iss": "https://a.example", "n": 1], key: key, algorithm: .ES256, keyID: kid, type: "x+jwt")
            let parsed = try JWS.parse(compact)
            XCTAssertEqual(parsed.keyID, kid)
            XCTAssertEqual(parsed.type, "x+jwt")
            XCTAssertEqual(parsed.algorithm, "ES256")
            XCTAssertEqual(try parsed.payload(), ["iss": "https://a.example", "n": 1])
            XCTAssertNoThrow(try parsed.verify(keys: published, allowList: [.ES256], expectedType: "x+jwt"))
        }
        // Extra header members still go through the serializer, alg forced.
        let compact = try JWS.sign(payload: [:], key: key, algorithm: .ES256, keyID: "k", type: nil, extraHeader: ["alg": "none", "x5c": ["AA"]])
        let header = try JWS.parse(compact).header
        XCTAssertEqual(header, ["alg": "ES256", "kid": "k", "x5c": ["AA"]])
    }

    /// The kid `JWK(components:)` hashes from its members directly is the RFC 7638 thumbprint.
    func testKidOfBuiltJWKsIsTheRFC7638Thumbprint() throws {
        let rsa = try jwk(RFCVectors.rfc7638Key).publicKey()
        XCTAssertEqual(JWK(publicKey: rsa).kid, RFCVectors.rfc7638Thumbprint)
        let okp = try jwk(RFCVectors.rfc8037Key).publicKey()
        XCTAssertEqual(JWK(publicKey: okp).kid, RFCVectors.rfc8037Thumbprint)
        for algorithm in SignatureAlgorithm.allCases {
            let made = JWK(components: try PrivateKey(generatingFor: algorithm).publicComponents, algorithm: algorithm)
            XCTAssertEqual(made.kid, made.thumbprint(), "\(algorithm)")
        }
        // A curve name that needs escaping (never a real one) still hashes the serializer's bytes.
        let odd = JWK(components: .ec(curve: "P-\"256", x: [1, 2], y: [3, 4]))
        XCTAssertEqual(odd.kid, odd.thumbprint())
    }
}
