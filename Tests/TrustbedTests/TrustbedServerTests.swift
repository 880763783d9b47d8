import Support
import Foundation
import Logging
import XCTest
import Federation
import Store
@testable import Trustbed

final class TrustbedServerTests: XCTestCase {
    /// A server over a copy of the demo entities in a fresh state directory, not started.
    private func server(clock: Clock) throws -> (TrustbedServer, String) {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("trustbed-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: state + "/Keys", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: repo.appendingPathComponent("Entities").path, toPath: state + "/Entities")
        var c = ServerConfiguration()
        c.entitiesDirectory = state + "/Entities"
        c.keysDirectory = state + "/Keys"
        c.databasePath = state + "/trustbed.sqlite"
        c.port = 0
        return (try TrustbedServer(configuration: c, logger: Logger(label: "test"), clock: clock), c.databasePath)
    }

    func testPurgeDropsOnlyExpiredRemoteStatements() throws {
        let clock = ManualClock(1_000_000)
        let (server, path) = try server(clock: clock)
        let cache = StatementCacheRepository(database: try Database(path: path))
        try cache.put(url: "https://old.example/.well-known/openid-federation", body: "a.b.c", expiresAt: 999_999, fetchedAt: 900_000)
        try cache.put(url: "https://new.example/.well-known/openid-federation", body: "d.e.f", expiresAt: 1_000_500, fetchedAt: 900_000)
        server.purgeExpired()
        // Read past expiry too: only a purge, not the lookup's own expiry check, removes a row.
        XCTAssertEqual(try cache.purge(now: 2_000_000), 1, "the fresh row must survive the purge and the expired one must be gone")
    }

    /// stop() returns only once the background key generator has ended: the caller exits next,
    /// and exit() frees OpenSSL's global state under any thread still making a key (a segfault on
    /// SIGTERM during a large federation's first start).
    func testStopWaitsForTheBackgroundKeyGenerator() throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("trustbed-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        try FileManager.default.createDirectory(atPath: state + "/Entities", withIntermediateDirectories: true)
        try Data(#"{"trust_anchor": true, "metadata": {"federation_entity": {"organization_name": "TA"}}}"#.utf8)
            .write(to: URL(fileURLWithPath: state + "/Entities/ta.json"))
        for n in 0..<3000 {
            try Data(#"{"authority_hints": ["ta"], "metadata": {"federation_entity": {"organization_name": "L"}}}"#.utf8)
                .write(to: URL(fileURLWithPath: state + "/Entities/leaf-\(n).json"))
        }
        var c = ServerConfiguration()
        c.entitiesDirectory = state + "/Entities"
        c.keysDirectory = state + "/Keys"
        c.databasePath = state + "/trustbed.sqlite"
        c.port = 0
        let server = try TrustbedServer(configuration: c, logger: Logger(label: "test"))
        try server.start()
        func keys() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: c.keysDirectory).count) ?? 0 }
        let deadline = Date(timeIntervalSinceNow: 60)
        while keys() < 20, Date() < deadline { usleep(5_000) }
        server.stop()
        let atStop = keys()
        XCTAssertLessThan(atStop, 3000, "generation finished before the stop: the test proves nothing")
        usleep(500_000)
        XCTAssertEqual(keys(), atStop, "keys were still being made after stop() returned")
    }

    /// A generated admin token is pasted after `--admin-token`; base64url starts with '-' once in
    /// 64 tokens, which the command line would read as an option (an interop run hit it).
    func testGeneratedAdminTokensNeverStartWithADash() {
        for _ in 0..<2_000 {
            let token = ServiceAssembly.newAdminToken()
            XCTAssertFalse(token.hasPrefix("-"), token)
            XCTAssertEqual(token.count, 43)
        }
    }
}
