import Foundation
import Store
import XCTest

final class ConcurrentWriterTests: XCTestCase {
    private static let threads = 8
    private static let rowsPerThread = 200

    /// Collects failures from worker threads, which cannot call XCTFail safely.
    private final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var errors: [Error] = []
        func add(_ error: Error) { lock.lock(); errors.append(error); lock.unlock() }
        var all: [Error] { lock.lock(); defer { lock.unlock() }; return errors }
    }

    /// Starts `threads` real threads (not a pool that may run them two at a time on two cores)
    /// and waits for all of them.
    private func runOnThreads(_ work: @escaping @Sendable (Int) throws -> Void) -> [Error] {
        let failures = Failures()
        let group = DispatchGroup()
        for index in 0..<Self.threads {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                do { try work(index) } catch { failures.add(error) }
            }
            thread.start()
        }
        group.wait()
        return failures.all
    }

    func testEightThreadsOnOneConnection() throws {
        let database = try Database(path: try temporaryDatabasePath())
        try database.execute("CREATE TABLE t (thread INTEGER, n INTEGER, PRIMARY KEY (thread, n))")
        let settings = SettingsRepository(database: database)

        let errors = runOnThreads { thread in
            for n in 0..<Self.rowsPerThread {
                if n % 2 == 0 {
                    try database.execute("INSERT INTO t VALUES (?, ?)", [.integer(Int64(thread)), .integer(Int64(n))])
                } else {
                    // Read-then-write inside a transaction: must not interleave with other threads.
                    try database.transaction { db in
                        let before = try db.query("SELECT count(*) AS c FROM t WHERE thread = ?",
                                                  [.integer(Int64(thread))]).first?.int("c") ?? -1
                        try db.execute("INSERT INTO t VALUES (?, ?)", [.integer(Int64(thread)), .integer(Int64(n))])
                        let after = try db.query("SELECT count(*) AS c FROM t WHERE thread = ?",
                                                 [.integer(Int64(thread))]).first?.int("c") ?? -1
                        if after != before + 1 { throw StoreError.constraint("interleaved: \(before) -> \(after)") }
                    }
                }
                _ = try settings.increment("counter")
            }
        }

        XCTAssertTrue(errors.isEmpty, "\(errors.prefix(5))")
        let total = Int64(Self.threads * Self.rowsPerThread)
        XCTAssertEqual(try database.query("SELECT count(*) AS c FROM t").first?.int("c"), total)
        XCTAssertEqual(try settings.get("counter"), String(total))
    }

    /// Two connections on one file contend for SQLite's own write lock; the busy timeout and
    /// BEGIN IMMEDIATE must keep SQLITE_BUSY from ever reaching callers.
    func testEightThreadsOnTwoConnectionsToOneFile() throws {
        let path = try temporaryDatabasePath()
        let first = try Database(path: path)
        let second = try Database(path: path)
        try first.execute("CREATE TABLE t (thread INTEGER, n INTEGER, PRIMARY KEY (thread, n))")

        let errors = runOnThreads { thread in
            let database = thread % 2 == 0 ? first : second
            let settings = SettingsRepository(database: database)
            for n in 0..<Self.rowsPerThread / 4 {
                try database.execute("INSERT INTO t VALUES (?, ?)", [.integer(Int64(thread)), .integer(Int64(n))])
                _ = try settings.increment("counter")
                // Read, pause so the other connection commits meanwhile, then write: with a
                // deferred BEGIN the write would fail with SQLITE_BUSY (stale snapshot).
                try database.transaction { db in
                    let seen = try db.query("SELECT count(*) AS c FROM t").first?.int("c") ?? 0
                    usleep(200)
                    try db.execute("INSERT INTO t VALUES (?, ?)", [.integer(Int64(thread)), .integer(-1 - seen)])
                }
            }
        }

        XCTAssertTrue(errors.isEmpty, "\(errors.prefix(5))")
        let total = Int64(Self.threads * (Self.rowsPerThread / 4))
        XCTAssertEqual(try second.query("SELECT count(*) AS c FROM t").first?.int("c"), 2 * total)
        XCTAssertEqual(try SettingsRepository(database: first).get("counter"), String(total))
    }
}
