import XCTest
import JSON
@testable import Federation

final class ConstraintsTests: XCTestCase {
    func testParsesAndSerializes() throws {
        let json: JSONValue = [
            "max_path_length": 2,
            "naming_constraints": ["permitted": [".example.com"], "excluded": ["east.example.com"]],
            "allowed_entity_types": ["openid_provider", "openid_relying_party"],
            "future_constraint": true,
        ]
        let c = try FederationConstraints(json: json)
        XCTAssertEqual(c.maxPathLength, 2)
        XCTAssertEqual(c.permittedNames, [".example.com"])
        XCTAssertEqual(c.excludedNames, ["east.example.com"])
        XCTAssertEqual(c.allowedEntityTypes, ["openid_provider", "openid_relying_party"])
        var expected = json
        expected["future_constraint"] = nil
        XCTAssertEqual(c.jsonValue, expected)
        XCTAssertEqual(try FederationConstraints(json: c.jsonValue), c)
        XCTAssertEqual(try FederationConstraints(json: [:]), FederationConstraints())
        XCTAssertEqual(try FederationConstraints(json: ["max_path_length": 3.0]).maxPathLength, 3)
    }

    func testRejectsMalformedInput() {
        let bad: [JSONValue] = [
            "x", ["max_path_length": -1], ["max_path_length": 1.5], ["max_path_length": "1"],
            ["naming_constraints": ["permitted": "example.com"]], ["naming_constraints": ["excluded": [1]]],
            ["naming_constraints": ["permitted": ["https://example.com"]]], ["naming_constraints": ["permitted": ["."]]],
            ["naming_constraints": ["permitted": ["a..b"]]], ["naming_constraints": []],
            ["allowed_entity_types": "openid_provider"], ["allowed_entity_types": ["federation_entity"]],
        ]
        for b in bad {
            XCTAssertThrowsError(try FederationConstraints(json: b), b.serialized()) { error in
                guard case .malformed = error as? ConstraintError else { return XCTFail("\(error)") }
            }
        }
    }

    func testMaxPathLength() throws {
        let zero = FederationConstraints(maxPathLength: 0)
        XCTAssertNoThrow(try zero.check(intermediatesBelow: 0))
        XCTAssertThrowsError(try zero.check(intermediatesBelow: 1)) { XCTAssertEqual($0 as? ConstraintError, .maxPathLengthExceeded) }
        let one = FederationConstraints(maxPathLength: 1)
        XCTAssertNoThrow(try one.check(intermediatesBelow: 1))
        XCTAssertThrowsError(try one.check(intermediatesBelow: 2))
        XCTAssertNoThrow(try FederationConstraints().check(intermediatesBelow: 10))
    }

    func testNamingConstraintsUseHostSemantics() throws {
        let c = FederationConstraints(permittedNames: [".example.com", "other.org"], excludedNames: ["east.example.com"])
        for ok in ["https://rp.example.com", "https://a.b.Example.COM:8443/path?x", "https://other.org/x", "https://user@west.example.com."] {
            XCTAssertNoThrow(try c.check(entityID: ok), ok)
        }
        for bad in ["https://example.com", "https://east.example.com/rp", "https://sub.other.org", "https://evilexample.com",
                    "https://example.com.evil.net", "not a url"] {
            XCTAssertThrowsError(try c.check(entityID: bad), bad) { error in
                guard case .namingConstraintViolated = error as? ConstraintError else { return XCTFail("\(error)") }
            }
        }
        // Excluded only: everything else passes.
        let ex = FederationConstraints(excludedNames: [".bad.example"])
        XCTAssertNoThrow(try ex.check(entityID: "https://good.example"))
        XCTAssertThrowsError(try ex.check(entityID: "https://x.bad.example"))
        XCTAssertNoThrow(try ex.check(entityID: "https://bad.example"))
    }

    func testAllowedEntityTypesFilterKeepsFederationEntity() {
        let metadata: [String: JSONValue] = ["federation_entity": [:], "openid_provider": [:], "openid_relying_party": [:], "oauth_client": [:]]
        let c = FederationConstraints(allowedEntityTypes: ["openid_relying_party"])
        XCTAssertEqual(c.filter(metadata: metadata), ["federation_entity": [:], "openid_relying_party": [:]])
        XCTAssertEqual(c.disallowedEntityTypes(in: metadata), ["oauth_client", "openid_provider"])
        XCTAssertEqual(FederationConstraints(allowedEntityTypes: []).filter(metadata: metadata), ["federation_entity": [:]])
        XCTAssertEqual(FederationConstraints().filter(metadata: metadata), metadata)
    }
}
