import Foundation
@testable import Store
import XCTest

/// `.processCrash` files are checkpointed by `WALCheckpointer` on its own queue, never inside
/// a commit: the writer's automatic checkpoint is off, yet written pages still reach the main
/// file while the writer stays open.
final class CheckpointTests: XCTestCase {
    func testProcessCrashWriterCheckpointsInTheBackground() throws {
        let path = try temporaryDatabasePath()
        let database = try Database(path: path, durability: .processCrash)
        XCTAssertEqual(try database.query("PRAGMA wal_autocheckpoint", [], cached: false).first?.int("wal_autocheckpoint"), 0,
                       "commits must not checkpoint on their own thread")
        try database.execute("CREATE TABLE filler (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
        let before = try fileSize(path)
        // About 8 MiB in 2,000 commits: well past the 1,000-page threshold.
        let blob = SQLValue.blob([UInt8](repeating: 7, count: 4_000))
        for id in 0..<2_000 {
            try database.execute("INSERT INTO filler (id, data) VALUES (?, ?)", [.integer(Int64(id)), blob])
        }
        let deadline = Date().addingTimeInterval(10)
        while try fileSize(path) < before + 4_000_000, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        XCTAssertGreaterThan(try fileSize(path), before + 4_000_000, "the WAL was copied into the main file")
        XCTAssertEqual(try database.query("SELECT count(*) AS n FROM filler").first?.int("n"), 2_000)
        database.close()
    }

    /// A busy writer never lets a background checkpoint catch up, and SQLite rewinds the WAL
    /// only after a complete one: past `rewind` pages the writer finishes the checkpoint itself,
    /// so the WAL file stops growing.
    func testWALStaysBoundedUnderContinuousWrites() throws {
        let path = try temporaryDatabasePath()
        let database = try Database(path: path, durability: .processCrash,
                                    walLimits: WALCheckpointer.Limits(background: 20, rewind: 200, inline: 800))
        try database.execute("CREATE TABLE filler (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
        let blob = SQLValue.blob([UInt8](repeating: 7, count: 4_000))
        for id in 0..<3_000 {
            try database.execute("INSERT INTO filler (id, data) VALUES (?, ?)", [.integer(Int64(id)), blob])
        }
        // The file keeps its high-water mark: without the rewind it would hold every frame
        // written, 19.4 MB (3,000 rows of 4 KB on 1 KiB pages, ~6 frames each); with it,
        // about the rewind limit plus what came during a checkpoint.
        // How much came during one depends on when the checkpoint thread is scheduled: with the
        // machine's two cores busy with builds it reached 8.1 MB, so the bound is 10 MB, still
        // far from what the WAL holds when nothing rewinds it.
        XCTAssertLessThan(try fileSize(path + "-wal"), 10_000_000)
        database.close()
    }

    func testNewFilesUseSmallPages() throws {
        let database = try Database(path: try temporaryDatabasePath())
        XCTAssertEqual(try database.query("PRAGMA page_size", [], cached: false).first?.int("page_size"), 1_024)
    }

    func testPowerCutWriterKeepsSQLiteAutomaticCheckpoint() throws {
        let database = try Database(path: try temporaryDatabasePath())
        XCTAssertEqual(try database.query("PRAGMA wal_autocheckpoint", [], cached: false).first?.int("wal_autocheckpoint"), 1_000)
    }

    private func fileSize(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }
}
