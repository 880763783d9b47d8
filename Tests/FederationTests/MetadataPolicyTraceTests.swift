import Foundation
import XCTest
import JSON
@testable import Federation

/// The explorer's policy trace runs the resolver's own merge and application: on all 2,019 public
/// vectors its result (or error code) equals `resolve`'s, and a failure is placed at the level,
/// parameter and section where it happens.
final class MetadataPolicyTraceTests: XCTestCase {
    private static let t = "openid_relying_party"

    private func loadVectors() throws -> [JSONValue] {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let path = tests.appendingPathComponent("Fixtures/metadata-policy-test-vectors-2025-02-13.json").path
        let data = try XCTUnwrap(FileManager.default.contents(atPath: path), "missing \(path)")
        return try XCTUnwrap(JSONValue.parse([UInt8](data)).arrayValue)
    }

    func testTraceEqualsResolveOnAllVectors() throws {
        let vectors = try loadVectors()
        XCTAssertEqual(vectors.count, 2019)
        var failures: [String] = []
        var changedSeen = 0
        for v in vectors {
            let n = v["n"]?.intValue ?? -1
            let ta = try XCTUnwrap(v["TA"]?.objectValue), int = try XCTUnwrap(v["INT"]?.objectValue)
            let metadata = try XCTUnwrap(v["metadata"])
            let leaf: [String: JSONValue] = [Self.t: metadata]
            let trace = MetadataPolicy.trace(leafMetadata: leaf, superiorMetadata: nil, policies: [
                (entityID: "https://ta.example", policy: [Self.t: .object(ta)], crit: []),
                (entityID: "https://int.example", policy: [Self.t: .object(int)], crit: []),
            ])
            var resolved: [String: JSONValue]?
            var code: String?
            do {
                resolved = try MetadataPolicy.resolve(leafMetadata: leaf, superiorMetadata: nil, policies: [
                    (policy: [Self.t: .object(ta)], crit: []), (policy: [Self.t: .object(int)], crit: []),
                ])
            } catch { code = error.code }

            if let code {
                if trace.failure?.code != code || trace.resolved != nil { failures.append("n=\(n): resolve threw \(code), trace \(String(describing: trace.failure))") }
                if v["error"]?.stringValue != code { failures.append("n=\(n): resolve threw \(code), vector expects \(v["error"]?.stringValue ?? "success")") }
                continue
            }
            guard let resolved, let got = trace.resolved, JSONValue.object(got).jsonEquals(.object(resolved)) else {
                failures.append("n=\(n): trace \(trace.resolved.map { JSONValue.object($0).serialized() } ?? "nil") ≠ resolve"); continue
            }
            // Each parameter's final value is the resolved one, and `changed` says whether it differs from the leaf's.
            let resolvedParams = resolved[Self.t]?.objectValue ?? [:]
            for p in trace.entityTypes.first(where: { $0.name == Self.t })?.parameters ?? [] {
                let want = resolvedParams[p.name]
                if !PolicyTraceRecorder.same(p.finalValue, want) { failures.append("n=\(n): \(p.name) final ≠ resolved") }
                if p.changed == PolicyTraceRecorder.same(p.leafValue, want) { failures.append("n=\(n): \(p.name) changed flag wrong") }
                if p.changed { changedSeen += 1 }
                if let merged = v["merged"]?[p.name], let m = p.merged, !JSONValue.object(m).jsonEquals(merged) {
                    failures.append("n=\(n): \(p.name) merged \(JSONValue.object(m).serialized()) ≠ \(merged.serialized())")
                }
            }
        }
        XCTAssertTrue(failures.isEmpty, "\(failures.count) problems:\n" + failures.prefix(20).joined(separator: "\n"))
        XCTAssertGreaterThan(changedSeen, 100)
    }

    func testMergeConflictIsPlacedAtTheSubordinateLevelWithItsSection() {
        let trace = MetadataPolicy.trace(
            leafMetadata: ["openid_relying_party": ["token_endpoint_auth_method": "private_key_jwt", "client_name": "x"]],
            superiorMetadata: nil,
            policies: [
                (entityID: "https://ta.example", policy: ["openid_relying_party": ["token_endpoint_auth_method": ["value": "private_key_jwt"]]], crit: []),
                (entityID: "https://int.example", policy: ["openid_relying_party": ["token_endpoint_auth_method": ["value": "client_secret_basic"]]], crit: []),
            ])
        let f = trace.failure
        XCTAssertEqual(f?.stage, .merge)
        XCTAssertEqual(f?.code, "invalid_policy")
        XCTAssertEqual(f?.levelEntityID, "https://int.example")
        XCTAssertEqual(f?.entityType, "openid_relying_party")
        XCTAssertEqual(f?.parameter, "token_endpoint_auth_method")
        XCTAssertEqual(f?.section, "6.1.4.1, 6.1.3.1.1")
        XCTAssertNil(trace.resolved)
        let p = trace.parameter("token_endpoint_auth_method", of: "openid_relying_party")
        XCTAssertEqual(p?.failed, true)
        XCTAssertEqual(p?.levels.map(\.entityID), ["https://ta.example", "https://int.example"])
    }

    func testApplicationFailureAndChangingOperators() {
        let policies: [(entityID: String, policy: [String: JSONValue], crit: [String])] = [
            (entityID: "https://ta.example", policy: ["openid_relying_party": [
                "contacts": ["add": ["ops@ta.example"]],
                "response_types": ["subset_of": ["code"]],
                "id_token_signed_response_alg": ["one_of": ["ES256"]],
            ]], crit: []),
        ]
        let ok = MetadataPolicy.trace(leafMetadata: ["openid_relying_party": ["response_types": ["code", "id_token"], "id_token_signed_response_alg": "ES256"]],
                                      superiorMetadata: nil, policies: policies)
        XCTAssertNil(ok.failure)
        XCTAssertEqual(ok.parameter("contacts", of: "openid_relying_party")?.changedBy, ["add"])
        XCTAssertEqual(ok.parameter("response_types", of: "openid_relying_party")?.changedBy, ["subset_of"])
        XCTAssertEqual(ok.parameter("response_types", of: "openid_relying_party")?.finalValue, ["code"])
        XCTAssertEqual(ok.parameter("id_token_signed_response_alg", of: "openid_relying_party")?.changed, false)

        let bad = MetadataPolicy.trace(leafMetadata: ["openid_relying_party": ["id_token_signed_response_alg": "RS256"]],
                                       superiorMetadata: nil, policies: policies)
        XCTAssertEqual(bad.failure?.stage, .apply)
        XCTAssertEqual(bad.failure?.code, "invalid_metadata")
        XCTAssertEqual(bad.failure?.parameter, "id_token_signed_response_alg")
        XCTAssertEqual(bad.failure?.section, "6.1.4.2, 6.1.3.1.4")
    }

    func testSuperiorMetadataIsAChange() {
        let trace = MetadataPolicy.trace(leafMetadata: ["federation_entity": ["organization_name": "Leaf"]],
                                         superiorMetadata: ["federation_entity": ["organization_name": "Renamed"]], policies: [])
        XCTAssertEqual(trace.parameter("organization_name", of: "federation_entity")?.changedBy, ["metadata"])
        XCTAssertEqual(trace.resolved?["federation_entity"]?["organization_name"], "Renamed")
    }
}
