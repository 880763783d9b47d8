import Store
import XCTest

final class TransactionTests: XCTestCase {
    private struct Abort: Error {}
    private var database: Database!

    override func setUpWithError() throws {
        database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
    }

    private func count() throws -> Int64? {
        try database.query("SELECT count(*) AS n FROM t").first?.int("n")
    }

    func testCommitKeepsEverythingAndReturnsTheValue() throws {
        let value = try database.transaction { db in
            try db.execute("INSERT INTO t VALUES (1)")
            try db.execute("INSERT INTO t VALUES (2)")
            return "done"
        }
        XCTAssertEqual(value, "done")
        XCTAssertEqual(try count(), 2)
    }

    func testThrownErrorRollsBackEverything() throws {
        XCTAssertThrowsError(try database.transaction { db in
            try db.execute("INSERT INTO t VALUES (1)")
            try db.execute("INSERT INTO t VALUES (2)")
            throw Abort()
        }) { XCTAssertTrue($0 is Abort) }
        XCTAssertEqual(try count(), 0)
    }

    func testFailingStatementRollsBackEarlierWrites() throws {
        XCTAssertThrowsError(try database.transaction { db in
            try db.execute("INSERT INTO t VALUES (1)")
            try db.execute("INSERT INTO t VALUES (1)") // primary key clash
        }) { error in
            guard case StoreError.constraint = error else { return XCTFail("unexpected \(error)") }
        }
        XCTAssertEqual(try count(), 0)
        // Not left inside a transaction: a new one can begin.
        try database.transaction { db in try db.execute("INSERT INTO t VALUES (5)") }
        XCTAssertEqual(try count(), 1)
    }

    func testNestedFailureUndoesOnlyTheInnerWork() throws {
        try database.transaction { db in
            try db.execute("INSERT INTO t VALUES (1)")
            XCTAssertThrowsError(try db.transaction { inner in
                try inner.execute("INSERT INTO t VALUES (2)")
                throw Abort()
            })
            try db.execute("INSERT INTO t VALUES (3)")
        }
        XCTAssertEqual(try database.query("SELECT id FROM t ORDER BY id").compactMap { $0.int("id") }, [1, 3])
    }

    func testOuterFailureUndoesCommittedInnerWork() throws {
        XCTAssertThrowsError(try database.transaction { db in
            try db.transaction { inner in try inner.execute("INSERT INTO t VALUES (1)") }
            throw Abort()
        })
        XCTAssertEqual(try count(), 0)
    }

    func testRolledBackWorkIsInvisibleToAnotherConnection() throws {
        let path = try temporaryDatabasePath()
        let writer = try Database(path: path)
        let reader = try Database(path: path)
        try writer.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
        XCTAssertThrowsError(try writer.transaction { db in
            try db.execute("INSERT INTO t VALUES (1)")
            XCTAssertEqual(try reader.query("SELECT count(*) AS n FROM t").first?.int("n"), 0)
            throw Abort()
        })
        XCTAssertEqual(try reader.query("SELECT count(*) AS n FROM t").first?.int("n"), 0)
    }
}
