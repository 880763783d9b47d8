import Foundation
@testable import Store
import XCTest

/// A commit that has returned survives `kill -9` of the process that made it, and the file stays
/// sound. The committing process is this test binary run again with one test selected
/// (`testChildCommitsAndWaitsToBeKilled`) and the database path in the environment, so it opens
/// the file exactly as the server's issuers do (`Database`, `.processCrash`: WAL and
/// synchronous=NORMAL) and runs nothing else. Re-executing rather than fork(2): the XCTest process
/// has other threads and libdispatch, which a forked child may not use.
///
/// The transactions are the hard case for a write-ahead log: a page cache of a few pages spills
/// while the transaction runs, and the rows written first are changed again, so SQLite rewrites
/// frames it already wrote and then the checksums of every frame after them (walRewriteChecksums),
/// the commit frame's last. A VFS that held any of those writes after COMMIT returned loses the
/// transaction (a broken checksum chain ends the log there) or corrupts the file.
final class CrashDurabilityTests: XCTestCase {
    private static let pathVariable = "TRUSTBED_CRASH_CHILD_DATABASE"
    private static let rows = 4_000
    private static let committed = "TRUSTBED-CHILD-COMMITTED"

    /// Runs only in the child process; skipped in a normal test run.
    func testChildCommitsAndWaitsToBeKilled() throws {
        guard let path = ProcessInfo.processInfo.environment[Self.pathVariable] else {
            throw XCTSkip("the child half of testKillNineAfterCommitLosesNothing")
        }
        let database = try Database(path: path, durability: .processCrash)
        // 8 pages of 1 KiB: the transactions below spill many times over.
        try database.execute("PRAGMA cache_size = 8")
        try database.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB NOT NULL, generation INTEGER NOT NULL)")
        try database.transaction { (db: Database) throws in
            for id in 1...Self.rows {
                try db.execute("INSERT INTO t (id, v, generation) VALUES (?, ?, 1)", [.integer(Int64(id)), Self.blob(id, 1)])
            }
            // The first rows' pages were spilled to the WAL long ago: change them again.
            for id in 1...Self.rows / 4 {
                try db.execute("UPDATE t SET v = ?, generation = 2 WHERE id = ?", [Self.blob(id, 2), .integer(Int64(id))])
            }
        }
        // What the purge of expired state does: a checkpoint, then a spilling transaction that
        // deletes many rows and changes others it has already spilled.
        try database.execute("PRAGMA wal_checkpoint(PASSIVE)")
        try database.transaction { (db: Database) throws in
            try db.execute("DELETE FROM t WHERE id % 2 = 0 AND id > ?", [.integer(Int64(Self.rows / 2))])
            for id in stride(from: 1, through: Self.rows / 8, by: 1) {
                try db.execute("UPDATE t SET v = ?, generation = 3 WHERE id = ?", [Self.blob(id, 3), .integer(Int64(id))])
            }
        }
        // Both commits have returned: the parent may kill us from here on.
        FileHandle.standardOutput.write(Data("\n\(Self.committed)\n".utf8))
        Thread.sleep(forTimeInterval: 60)
        XCTFail("the parent should have killed this process")
    }

    func testKillNineAfterCommitLosesNothing() throws {
        let executable = "/proc/self/exe"
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw XCTSkip("needs /proc/self/exe to run this test binary again")
        }
        let path = try temporaryDatabasePath()
        let child = Process()
        child.executableURL = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: executable)) ?? executable)
        child.arguments = ["StoreTests.CrashDurabilityTests/testChildCommitsAndWaitsToBeKilled"]
        var environment = ProcessInfo.processInfo.environment
        environment[Self.pathVariable] = path
        child.environment = environment
        let output = Pipe()
        child.standardOutput = output
        child.standardError = FileHandle.nullDevice
        try child.run()
        defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }

        var seen = Data()
        let marker = Data(Self.committed.utf8)
        while seen.range(of: marker) == nil {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            seen.append(chunk)
        }
        XCTAssertNotNil(seen.range(of: marker), "the child did not commit: \(String(decoding: seen, as: UTF8.self))")
        XCTAssertEqual(kill(child.processIdentifier, SIGKILL), 0)
        child.waitUntilExit()
        XCTAssertEqual(child.terminationReason, .uncaughtSignal)

        let reopened = try Database(path: path, durability: .processCrash)
        XCTAssertEqual(try reopened.query("PRAGMA integrity_check").first?.text("integrity_check"), "ok")
        let kept = (1...Self.rows).filter { $0 <= Self.rows / 2 || $0 % 2 == 1 }
        let found = try reopened.query("SELECT id, v, generation FROM t ORDER BY id")
        XCTAssertEqual(found.count, kept.count, "rows after the crash")
        XCTAssertTrue(found.map { Int($0.int("id") ?? 0) } == kept, "every committed row, and no deleted one")
        let stale = found.filter { row in
            let id = Int(row.int("id") ?? 0)
            let generation = id <= Self.rows / 8 ? 3 : id <= Self.rows / 4 ? 2 : 1
            return row.int("generation") != Int64(generation) || row.blob("v").map(SQLValue.blob) != Self.blob(id, generation)
        }
        XCTAssertEqual(stale.count, 0, "rows without their last committed version, the first: \(stale.first?.int("id") ?? 0)")
    }

    /// 700 bytes that differ per row and generation, so a page from an older version is noticed.
    private static func blob(_ id: Int, _ generation: Int) -> SQLValue {
        .blob((0..<700).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ id &* 7 &+ generation &* 101) })
    }
}
