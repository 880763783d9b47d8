import Foundation
import XCTest
import JSON
@testable import Federation

/// Runs the public OpenID Federation metadata policy test vectors (Connect2id, 2025-02-13)
/// copied into `Tests/Fixtures/` (see its README), through both the two-policy API (`merge` then `apply`) and the
/// whole-chain `resolve`.
final class MetadataPolicyVectorTests: XCTestCase {
    private static let fileName = "metadata-policy-test-vectors-2025-02-13.json"
    private static let entityType = "openid_relying_party"

    private func loadVectors() throws -> [JSONValue] {
        // Tests/FederationTests/<file> → Tests/Fixtures/<vectors>, inside the repository.
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let path = tests.appendingPathComponent("Fixtures/\(Self.fileName)").path
        let data = try XCTUnwrap(FileManager.default.contents(atPath: path), "missing \(path)")
        return try XCTUnwrap(JSONValue.parse([UInt8](data)).arrayValue)
    }

    private func policy(_ v: JSONValue?) throws -> EntityTypePolicy {
        let o = try XCTUnwrap(v?.objectValue)
        return try o.mapValues { try XCTUnwrap($0.objectValue) }
    }

    /// nil when the vector passes, else why it did not.
    private func checkMergeThenApply(_ v: JSONValue) throws -> String? {
        let ta = try policy(v["TA"]), int = try policy(v["INT"])
        let metadata = try XCTUnwrap(v["metadata"]?.objectValue)
        let expectedError = v["error"]?.stringValue

        let merged: EntityTypePolicy
        do { merged = try MetadataPolicy.merge(superior: ta, subordinate: int) } catch {
            return expectedError == error.code ? nil : "merge threw \(error), expected \(expectedError ?? "success")"
        }
        if let want = v["merged"] {
            let got = JSONValue.object(merged.mapValues { .object($0) })
            guard got.jsonEquals(want) else { return "merged \(got.serialized()), expected \(want.serialized())" }
        } else if expectedError != nil {
            return "merge succeeded, expected \(expectedError!)"
        }
        let resolved: [String: JSONValue]
        do { resolved = try MetadataPolicy.apply(merged, to: metadata) } catch {
            return expectedError == error.code ? nil : "apply threw \(error), expected \(expectedError ?? "success")"
        }
        if let expectedError { return "apply succeeded, expected \(expectedError)" }
        let want = try XCTUnwrap(v["resolved"])
        return JSONValue.object(resolved).jsonEquals(want) ? nil : "resolved \(JSONValue.object(resolved).serialized()), expected \(want.serialized())"
    }

    private func checkResolve(_ v: JSONValue) throws -> String? {
        let t = Self.entityType
        let ta = try XCTUnwrap(v["TA"]), int = try XCTUnwrap(v["INT"])
        let metadata = try XCTUnwrap(v["metadata"])
        let expectedError = v["error"]?.stringValue
        let resolved: [String: JSONValue]
        do {
            resolved = try MetadataPolicy.resolve(
                leafMetadata: [t: metadata], superiorMetadata: nil,
                policies: [(policy: [t: ta], crit: []), (policy: [t: int], crit: [])])
        } catch {
            return expectedError == error.code ? nil : "resolve threw \(error), expected \(expectedError ?? "success")"
        }
        if let expectedError { return "resolve succeeded, expected \(expectedError)" }
        let want = try XCTUnwrap(v["resolved"])
        let got = resolved[t] ?? .null
        return got.jsonEquals(want) ? nil : "resolve gave \(got.serialized()), expected \(want.serialized())"
    }

    func testAllVectorsPass() throws {
        let vectors = try loadVectors()
        XCTAssertEqual(vectors.count, 2019)
        var passed = 0
        var failures: [String] = []
        for v in vectors {
            let n = v["n"]?.intValue ?? -1
            let problems = [try checkMergeThenApply(v), try checkResolve(v)].compactMap { $0 }
            if problems.isEmpty { passed += 1 } else { failures.append("n=\(n): " + problems.joined(separator: "; ")) }
        }
        XCTAssertEqual(passed, 2019, "\(failures.count) vectors failed:\n" + failures.prefix(20).joined(separator: "\n"))
        XCTAssertTrue(failures.isEmpty)
    }
}
