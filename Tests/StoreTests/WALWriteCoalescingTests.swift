import CSQLite
import Foundation
@testable import Store
import XCTest

/// The "trustbed-wal" VFS holds a commit's WAL frames and writes them at its commit frame. What
/// any other connection sees (another process through the file, as the CLI does, or a kill -9
/// leaves) must be what the default VFS gives: every commit whole, at once, after it returns.
final class WALWriteCoalescingTests: XCTestCase {
    func testDatabasesOpenThroughTheCoalescingVFS() throws {
        let db = try Database(path: try temporaryDatabasePath(), durability: .processCrash)
        XCTAssertEqual(db.vfsName, "trustbed-wal")
    }

    /// Each commit is visible to a second connection, through its own file handle, as soon as it
    /// returns: small commits, and one larger than the 64 KiB buffer.
    func testEveryCommitIsInTheFileWhenItReturns() throws {
        let path = try temporaryDatabasePath()
        let writer = try Database(path: path, durability: .processCrash)
        let reader = try Database(path: path, durability: .processCrash)
        try writer.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
        for i in 1...200 {
            try writer.transaction { (db: Database) throws in
                try db.execute("INSERT INTO t (v) VALUES (?)", [.text(String(repeating: "x", count: i * 7))])
                try db.execute("INSERT INTO t (v) VALUES (?)", [.text("second \(i)")])
            }
            XCTAssertEqual(try reader.query("SELECT COUNT(*) AS n FROM t").first?.int("n"), Int64(i * 2))
        }
        let big = String(repeating: "y", count: 900)
        try writer.transaction { (db: Database) throws in
            for _ in 0..<300 { try db.execute("INSERT INTO t (v) VALUES (?)", [.text(big)]) }
        }
        XCTAssertEqual(try reader.query("SELECT COUNT(*) AS n FROM t WHERE v = ?", [.text(big)]).first?.int("n"), 300)
        XCTAssertEqual(try reader.query("PRAGMA integrity_check").first?.text("integrity_check"), "ok")
    }

    /// A rolled-back transaction leaves nothing a reader or a later commit can see, and the log
    /// still checkpoints into a sound file.
    func testRollbackAndCheckpointStaySound() throws {
        let path = try temporaryDatabasePath()
        let writer = try Database(path: path, durability: .processCrash)
        let reader = try Database(path: path, durability: .processCrash)
        try writer.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
        struct Abort: Error {}
        XCTAssertThrowsError(try writer.transaction { (db: Database) throws in
            for i in 0..<500 { try db.execute("INSERT INTO t (v) VALUES (?)", [.text("rolled back \(i)")]) }
            throw Abort()
        })
        try writer.execute("INSERT INTO t (v) VALUES ('kept')")
        XCTAssertEqual(try reader.query("SELECT v FROM t").map { $0.text("v") }, ["kept"])
        _ = try writer.query("PRAGMA wal_checkpoint(TRUNCATE)")
        XCTAssertEqual(try reader.query("SELECT v FROM t").map { $0.text("v") }, ["kept"])
        XCTAssertEqual(try reader.query("PRAGMA integrity_check").first?.text("integrity_check"), "ok")
    }
}
