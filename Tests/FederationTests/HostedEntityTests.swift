import XCTest
import JSON
@testable import Federation

/// The compact representation of hosted entities and subordinate entries (serialized metadata,
/// one shared box per entity, no box for a subordinate with nothing declared) must be invisible.
final class HostedEntityTests: XCTestCase {
    func testMetadataComesBackAsDeclared() throws {
        let metadata: [String: JSONValue] = [
            "openid_relying_party": [
                "client_name": "Ünïcødé \"quoted\" \\ / \n",
                "redirect_uris": ["https://rp.example/cb"],
                "default_max_age": 3600,
                "ratio": 0.25,
                "require_auth_time": true,
                "jwks": .null,
                "nested": ["a": ["b": [1, 2, ["c": "d"]]]],
            ],
            "federation_entity": [:],
        ]
        let e = HostedEntity(name: "rp", entityID: "https://rp.example", metadata: metadata)
        XCTAssertTrue(JSONValue.object(e.metadata).jsonEquals(.object(metadata)))
        XCTAssertEqual(JSONValue.object(e.metadata).serialized(), JSONValue.object(metadata).serialized())
        XCTAssertEqual(HostedEntity(name: "x", entityID: "https://x.example").metadata, [:])
    }

    func testCopiesReadTheSameFields() {
        let issuance = TrustMarkIssuance(trustMarkType: "https://tm.example/t", subjects: ["https://s.example"], lifetime: 60)
        let e = HostedEntity(
            name: "ta", entityID: "https://ta.example", isTrustAnchor: true, authorityHints: [],
            subordinates: ["https://s.example": SubordinateEntry(entityID: "https://s.example", jwks: ["keys": []])],
            trustMarkIssuers: ["https://tm.example/t": ["https://ta.example"]], trustMarkOwners: ["https://tm.example/t": "https://o.example"],
            trustMarksIssued: [issuance], lifetime: 600, signingAlgorithm: .ES384)
        let copy = e
        XCTAssertEqual(copy.entityID, "https://ta.example")
        XCTAssertTrue(copy.isTrustAnchor)
        XCTAssertTrue(copy.issuesTrustMarks)
        XCTAssertEqual(copy.lifetime, 600)
        XCTAssertEqual(copy.signingAlgorithm, .ES384)
        XCTAssertEqual(copy.trustMarksIssued, [issuance])
        XCTAssertEqual(Set(copy.referencedEntityIDs), ["https://s.example", "https://ta.example", "https://o.example"])
    }

    func testSubordinateEntryKeepsOnlyWhatWasDeclared() {
        let plain = SubordinateEntry(entityID: "https://leaf.example")
        XCTAssertEqual(plain.policy, SubordinatePolicy())
        XCTAssertNil(plain.jwks)
        XCTAssertNil(plain.entityTypes)

        let policy = SubordinatePolicy(metadata: ["openid_relying_party": ["client_name": "x"]], constraints: ["max_path_length": 1])
        let declared = SubordinateEntry(entityID: "https://remote.example", policy: policy, jwks: ["keys": []], entityTypes: ["openid_provider"])
        XCTAssertEqual(declared.policy, policy)
        XCTAssertEqual(declared.jwks, ["keys": []])
        XCTAssertEqual(declared.entityTypes, ["openid_provider"])
        XCTAssertEqual(SubordinateEntry(entityID: "https://r.example", entityTypes: []).entityTypes, [])
    }
}
