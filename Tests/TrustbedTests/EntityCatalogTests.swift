import Foundation
import XCTest
import Federation
import JSON
@testable import Trustbed

final class EntityCatalogTests: XCTestCase {
    private func directory(_ files: [String: String]) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("entities-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for (name, text) in files { try text.write(toFile: "\(dir)/\(name)", atomically: true, encoding: .utf8) }
        return dir
    }

    private func loadError(_ files: [String: String]) throws -> EntityFileError? {
        let dir = try directory(files)
        do { _ = try EntityCatalog.load(directory: dir, baseURL: "http://x.test"); return nil } catch { return error }
    }

    func testDemoEntitiesLoad() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let catalog = try EntityCatalog.load(directory: repo.appendingPathComponent("Entities").path, baseURL: "http://127.0.0.1:8080")
        let byName = Dictionary(uniqueKeysWithValues: catalog.entities.map { ($0.name, $0) })
        XCTAssertEqual(Set(byName.keys), ["ta", "intermediate", "pid-provider", "pid-provider-haip", "wallet-provider", "relying-party"])
        XCTAssertTrue(byName["ta"]!.isTrustAnchor)
        XCTAssertEqual(byName["pid-provider"]!.authorityHints, ["http://127.0.0.1:8080/intermediate"])
        // The issuer metadata is generated from services.pid_provider when the server starts.
        XCTAssertEqual(byName["pid-provider"]!.services["pid_provider"]?["personas"], "personas/pid.json")
        XCTAssertEqual(byName["ta"]!.trustMarkIssuers["https://trustbed.example/trust-marks/pid-provider"], ["http://127.0.0.1:8080/ta"])
    }

    func testErrorsNameFileAndField() throws {
        let cases: [([String: String], String, String?)] = [
            (["a.json": #"{"trust_anchor": true, "authority_hints": "ta"}"#], "a.json", "authority_hints"),
            (["a.json": #"{"trust_anchor": "yes"}"#], "a.json", "trust_anchor"),
            (["a.json": #"{"trust_anchor": true, "colour": 1}"#], "a.json", "colour"),
            (["a.json": #"{"trust_anchor": true, "lifetime": -5}"#], "a.json", "lifetime"),
            (["a.json": #"{"trust_anchor": true, "signing_alg": "HS256"}"#], "a.json", "signing_alg"),
            (["a.json": #"{"authority_hints": ["nobody"]}"#], "a.json", "authority_hints"),
            (["a.json": #"{"trust_anchor": true, "subordinates": {"https://remote.test/x": {}}}"#], "a.json", "subordinates.https://remote.test/x.jwks"),
            (["a.json": #"{"trust_anchor": true, "subordinate_statement": {"metadata_policy": {"openid_relying_party": {"x": {"one_of": "notalist"}}}}}"#], "a.json", "subordinate_statement.metadata_policy"),
            (["a.json": #"{"trust_anchor": true, "subordinate_statement": {"constraints": {"max_path_length": "two"}}}"#], "a.json", "subordinate_statement.constraints"),
            (["a.json": "{not json"], "a.json", nil),
            (["a.json": #"{"authority_hints": ["b"]}"#, "b.json": #"{"authority_hints": ["a"]}"#], "a.json", "authority_hints"),
        ]
        for (files, file, field) in cases {
            let error = try XCTUnwrap(try loadError(files), "\(files) should be refused")
            XCTAssertTrue(error.file.hasSuffix(file), "\(error)")
            XCTAssertEqual(error.field, field, "\(error)")
            XCTAssertTrue(error.description.contains(file), "\(error)")
        }
    }

    func testPlaceholdersAndAbsoluteEntityIDs() throws {
        let dir = try directory([
            "ta.json": #"{"trust_anchor": true, "entity_id": "https://anchor.test", "metadata": {"federation_entity": {"homepage_uri": "{entity_id}/home", "x": ["{base_url}"]}}}"#,
            "leaf.json": #"{"authority_hints": ["ta"]}"#,
        ])
        let catalog = try EntityCatalog.load(directory: dir, baseURL: "http://h.test:1/")
        let ta = try XCTUnwrap(catalog.entities.first { $0.name == "ta" })
        XCTAssertEqual(ta.entityID, "https://anchor.test")
        XCTAssertEqual(ta.metadata["federation_entity"]?["homepage_uri"], "https://anchor.test/home")
        XCTAssertEqual(ta.metadata["federation_entity"]?["x"], ["http://h.test:1"])
        XCTAssertEqual(catalog.entities.first { $0.name == "leaf" }?.authorityHints, ["https://anchor.test"])
    }
}
