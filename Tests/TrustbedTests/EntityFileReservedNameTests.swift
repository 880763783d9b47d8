import Foundation
import XCTest
@testable import Trustbed

/// `/explorer/...` are the federation explorer's pages: an entity file named `explorer` would
/// put its endpoints under the same paths, so loading refuses it and says why.
final class EntityFileReservedNameTests: XCTestCase {
    func testAnEntityNamedExplorerIsRefusedWithTheFileNamed() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("entities-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try #"{"trust_anchor": true}"#.write(toFile: "\(dir)/ta.json", atomically: true, encoding: .utf8)
        try #"{"authority_hints": ["ta"]}"#.write(toFile: "\(dir)/explorer.json", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try EntityCatalog.load(directory: dir, baseURL: "http://x.test")) { error in
            let e = error as? EntityFileError
            XCTAssertEqual(e?.file.hasSuffix("explorer.json"), true, "\(error)")
            XCTAssertNil(e?.field)
            XCTAssertTrue("\(error)".contains("reserved for the federation explorer"), "\(error)")
        }
        // Another name with the same content loads.
        try FileManager.default.moveItem(atPath: "\(dir)/explorer.json", toPath: "\(dir)/explorers.json")
        XCTAssertEqual(try EntityCatalog.load(directory: dir, baseURL: "http://x.test").entities.count, 2)
    }
}
