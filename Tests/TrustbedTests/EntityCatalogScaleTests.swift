import Foundation
import XCTest
import Federation
@testable import Trustbed

/// Loading many entity files: parallel parse, reuse of unchanged files on reload, linear loop
/// check. `TRUSTBED_CATALOG_SIZE=100000 swift test --filter EntityCatalogScaleTests` measures the
/// full-scale load; the default keeps the test fast.
final class EntityCatalogScaleTests: XCTestCase {
    private var size: Int { ProcessInfo.processInfo.environment["TRUSTBED_CATALOG_SIZE"].flatMap(Int.init) ?? 2_000 }

    /// One trust anchor, 100 (or fewer) intermediates, the rest leaves.
    static func federation(size: Int) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("catalog-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let intermediates = min(100, max(1, size / 20))
        // Plain POSIX writes: FileManager's atomic write costs milliseconds per file.
        func write(_ name: String, _ text: String) {
            let fd = open("\(dir)/\(name).json", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            _ = Array(text.utf8).withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        write("ta", #"{"trust_anchor": true, "metadata": {"federation_entity": {"organization_name": "TA"}}}"#)
        for i in 0 ..< intermediates {
            write("int-\(i)", #"{"authority_hints": ["ta"], "metadata": {"federation_entity": {"organization_name": "Intermediate \#(i)"}}}"#)
        }
        for i in 0 ..< max(0, size - intermediates - 1) {
            write("leaf-\(i)", #"{"authority_hints": ["int-\#(i % intermediates)"], "metadata": {"openid_relying_party": {"client_name": "Leaf \#(i)", "redirect_uris": ["{entity_id}/cb"]}}}"#)
        }
        return dir
    }

    func testManyFilesLoadThenReloadReparsesOnlyChangedFiles() throws {
        let dir = try Self.federation(size: size)
        defer { try? FileManager.default.removeItem(atPath: dir) }

        var start = Date()
        let first = try EntityCatalog.load(directory: dir, baseURL: "http://x.test")
        var usage = rusage()
        #if os(Linux)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        print("EntityCatalog.load: \(first.entities.count) files in \(String(format: "%.3f", Date().timeIntervalSince(start))) s, max RSS \(usage.ru_maxrss / 1024) MiB")
        XCTAssertEqual(first.entities.count, size)
        XCTAssertEqual(first.sources.parsedCount, size)
        XCTAssertEqual(first.entities.map(\.name), first.entities.map(\.name).sorted())
        let leaf = try XCTUnwrap(first.entities.first { $0.name == "leaf-7" })
        XCTAssertEqual(leaf.metadata["openid_relying_party"]?["redirect_uris"], ["http://x.test/leaf-7/cb"])

        // Edit one file in place, replace one by rename, delete one, add one.
        try #"{"authority_hints": ["int-0"], "metadata": {"openid_relying_party": {"client_name": "edited"}}}"#
            .write(toFile: "\(dir)/leaf-1.json", atomically: false, encoding: .utf8)
        try #"{"authority_hints": ["int-0"], "metadata": {"openid_relying_party": {"client_name": "renamed"}}}"#
            .write(toFile: "\(dir)/leaf-2.json", atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(atPath: "\(dir)/leaf-3.json")
        try #"{"authority_hints": ["ta"]}"#.write(toFile: "\(dir)/new-leaf.json", atomically: false, encoding: .utf8)

        start = Date()
        let second = try EntityCatalog.load(directory: dir, baseURL: "http://x.test", reusing: first.sources)
        print("EntityCatalog.load (reload, 3 changed): \(String(format: "%.3f", Date().timeIntervalSince(start))) s")
        XCTAssertEqual(second.sources.parsedCount, 3, "only the edited, replaced and new files are parsed again")
        XCTAssertEqual(second.entities.count, size)
        let byName = Dictionary(uniqueKeysWithValues: second.entities.map { ($0.name, $0) })
        XCTAssertEqual(byName["leaf-1"]?.metadata["openid_relying_party"]?["client_name"], "edited")
        XCTAssertEqual(byName["leaf-2"]?.metadata["openid_relying_party"]?["client_name"], "renamed")
        XCTAssertNil(byName["leaf-3"])
        XCTAssertEqual(byName["new-leaf"]?.authorityHints, ["http://x.test/ta"])
    }

    /// A kept entity's references were resolved against the previous names; when a name it
    /// names goes away or means another entity ID, its unchanged file must be read again.
    func testReloadRereadsUnchangedFilesWhoseReferencesChanged() throws {
        let dir = try Self.federation(size: 40)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try EntityCatalog.load(directory: dir, baseURL: "http://x.test")
        let unchanged = try EntityCatalog.load(directory: dir, baseURL: "http://x.test", reusing: first.sources)
        XCTAssertEqual(unchanged.sources.parsedCount, 0)
        XCTAssertEqual(unchanged.entities.map(\.entityID), first.entities.map(\.entityID))
        XCTAssertEqual(unchanged.entities.first { $0.name == "leaf-3" }?.metadata["openid_relying_party"]?["client_name"], "Leaf 3")

        // int-1 moves to another entity ID: it and its leaves (leaf-0, leaf-2, ... name it) are parsed again.
        try #"{"entity_id": "https://moved.test/int-1", "authority_hints": ["ta"]}"#.write(toFile: "\(dir)/int-1.json", atomically: true, encoding: .utf8)
        let moved = try EntityCatalog.load(directory: dir, baseURL: "http://x.test", reusing: unchanged.sources)
        let leavesOfInt1 = first.entities.filter { $0.authorityHints == ["http://x.test/int-1"] }
        XCTAssertFalse(leavesOfInt1.isEmpty)
        XCTAssertEqual(moved.sources.parsedCount, 1 + leavesOfInt1.count)
        XCTAssertEqual(moved.entities.first { $0.name == leavesOfInt1[0].name }?.authorityHints, ["https://moved.test/int-1"])

        // int-1 disappears: its unchanged leaves now name nobody, which a fresh start refuses too.
        try FileManager.default.removeItem(atPath: "\(dir)/int-1.json")
        XCTAssertThrowsError(try EntityCatalog.load(directory: dir, baseURL: "http://x.test", reusing: moved.sources)) { error in
            let e = error as? EntityFileError
            XCTAssertEqual(e?.file, "\(dir)/\(leavesOfInt1.map(\.name).min()!).json")
            XCTAssertEqual(e?.field, "authority_hints")
        }
    }

    /// Entities built against another base URL are not reused.
    func testReloadWithAnotherBaseURLParsesEverything() throws {
        let dir = try Self.federation(size: 30)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try EntityCatalog.load(directory: dir, baseURL: "http://x.test")
        let second = try EntityCatalog.load(directory: dir, baseURL: "http://y.test", reusing: first.sources)
        XCTAssertEqual(second.sources.parsedCount, 30)
        XCTAssertEqual(second.entities.first { $0.name == "leaf-7" }?.metadata["openid_relying_party"]?["redirect_uris"], ["http://y.test/leaf-7/cb"])
    }

    func testBadFileAmongManyIsReportedFirstInNameOrder() throws {
        let dir = try Self.federation(size: 500)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "{broken".write(toFile: "\(dir)/leaf-9.json", atomically: false, encoding: .utf8)
        try #"{"authority_hints": 3}"#.write(toFile: "\(dir)/leaf-80.json", atomically: false, encoding: .utf8)
        XCTAssertThrowsError(try EntityCatalog.load(directory: dir, baseURL: "http://x.test")) { error in
            let e = error as? EntityFileError
            // "leaf-80" sorts before "leaf-9".
            XCTAssertTrue(e?.file.hasSuffix("/leaf-80.json") == true, "\(error)")
            XCTAssertEqual(e?.field, "authority_hints")
        }
        // A broken file that was fine before is reported on reload too, not masked by reuse.
        try #"{"authority_hints": ["ta"]}"#.write(toFile: "\(dir)/leaf-80.json", atomically: false, encoding: .utf8)
        try #"{"authority_hints": ["ta"]}"#.write(toFile: "\(dir)/leaf-9.json", atomically: false, encoding: .utf8)
        let good = try EntityCatalog.load(directory: dir, baseURL: "http://x.test")
        try #"{"authority_hints": ["ta"], "oops": 1}"#.write(toFile: "\(dir)/leaf-9.json", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try EntityCatalog.load(directory: dir, baseURL: "http://x.test", reusing: good.sources)) { error in
            XCTAssertEqual((error as? EntityFileError)?.field, "oops")
        }
    }

    func testLoopsAreFoundInLinearTime() throws {
        // A chain 20,000 deep: the old path-copying search was quadratic here.
        let n = 20_000
        var entities: [HostedEntity] = [HostedEntity(name: "e0", entityID: "http://x.test/e0", isTrustAnchor: true)]
        for i in 1 ..< n { entities.append(HostedEntity(name: "e\(i)", entityID: "http://x.test/e\(i)", authorityHints: ["http://x.test/e\(i - 1)"])) }
        let file = { (e: HostedEntity) in "\(e.name).json" }
        let start = Date()
        XCTAssertNoThrow(try EntityCatalog.checkNoLocalLoops(entities, file: file))
        XCTAssertLessThan(Date().timeIntervalSince(start), 5)

        // Close the chain into a loop far down: e0 now names e5.
        entities[0] = HostedEntity(name: "e0", entityID: "http://x.test/e0", authorityHints: ["http://x.test/e5"])
        XCTAssertThrowsError(try EntityCatalog.checkNoLocalLoops(entities, file: file)) { error in
            let e = error as? EntityFileError
            XCTAssertEqual(e?.file, "e0.json")
            XCTAssertEqual(e?.message, "loop: " + ["e0", "e5", "e4", "e3", "e2", "e1", "e0"].map { "http://x.test/\($0)" }.joined(separator: " → "))
        }
    }

    func testEntityOnlyReachingALoopIsNotBlamed() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("loop-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // "a" hangs below the loop b → c → b; the first entity on the loop is b.
        for (name, text) in [("a", #"{"authority_hints": ["b"]}"#), ("b", #"{"authority_hints": ["c"]}"#), ("c", #"{"authority_hints": ["b"]}"#)] {
            try text.write(toFile: "\(dir)/\(name).json", atomically: false, encoding: .utf8)
        }
        XCTAssertThrowsError(try EntityCatalog.load(directory: dir, baseURL: "http://x.test")) { error in
            let e = error as? EntityFileError
            XCTAssertTrue(e?.file.hasSuffix("/b.json") == true, "\(error)")
            XCTAssertEqual(e?.message, "loop: http://x.test/b → http://x.test/c → http://x.test/b")
        }
    }
}
