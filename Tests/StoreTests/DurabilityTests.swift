import Foundation
import Store
import XCTest

/// Without a subprocess to kill, the closest checks: a commit is visible to an independent
/// connection at once (it is in the WAL, not in a buffer of ours), and everything survives
/// closing and reopening the file.
final class DurabilityTests: XCTestCase {
    func testWriteCloseReopenRead() throws {
        let path = try temporaryDatabasePath()
        let record = TrustMarkRecord(id: String(repeating: "ab", count: 32), issuer: "https://ta.example.org",
                                     subject: "https://rp.example.org", trustMarkType: "https://ta.example.org/m",
                                     issuedAt: 1_000, expiresAt: 9_000)
        do {
            let database = try Database(path: path)
            try TrustMarkRepository(database: database).record(record)
            try KeyHistoryRepository(database: database)
                .recordActive(entity: "https://ta.example.org", kid: "k1", jwk: "{}", createdAt: 1)
            try StatementCacheRepository(database: database)
                .put(url: "https://x.example.org", body: "jwt", expiresAt: 9_000, fetchedAt: 1)
            _ = try SettingsRepository(database: database).increment("changes")
            database.close()
        }

        let reopened = try Database(path: path)
        XCTAssertEqual(try TrustMarkRepository(database: reopened).find(id: record.id), record)
        XCTAssertEqual(try KeyHistoryRepository(database: reopened).keys(entity: "https://ta.example.org").map(\.kid), ["k1"])
        XCTAssertEqual(try StatementCacheRepository(database: reopened).get(url: "https://x.example.org", now: 2), "jwt")
        XCTAssertEqual(try SettingsRepository(database: reopened).get("changes"), "1")
    }

    func testCommitIsVisibleToAnotherConnectionWithoutClosing() throws {
        let path = try temporaryDatabasePath()
        let writer = try Database(path: path)
        try SettingsRepository(database: writer).set("k", "v")

        XCTAssertTrue(FileManager.default.fileExists(atPath: path + "-wal"), "the write went to the WAL")
        let reader = try Database(path: path)
        XCTAssertEqual(try SettingsRepository(database: reader).get("k"), "v")
        withExtendedLifetime(writer) {}
    }
}
