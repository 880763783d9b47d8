import Store
import XCTest

/// Cached statements keep their column layout between queries; a schema change that SQLite
/// answers by re-preparing the statement must not leave a stale one.
final class ColumnLayoutTests: XCTestCase {
    func testCachedStatementSeesColumnsAddedBySchemaChange() throws {
        let database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE t (a INTEGER, b TEXT)")
        try database.execute("INSERT INTO t (a, b) VALUES (1, 'x')")
        let before = try XCTUnwrap(database.query("SELECT * FROM t").first)
        XCTAssertEqual(before.columns, ["a", "b"])
        XCTAssertEqual(before.text("b"), "x")
        XCTAssertEqual(try database.query("SELECT * FROM t").first?.int("a"), 1, "the cached layout, reused")

        try database.execute("ALTER TABLE t ADD COLUMN c INTEGER DEFAULT 7")
        let after = try XCTUnwrap(database.query("SELECT * FROM t").first)
        XCTAssertEqual(after.columns, ["a", "b", "c"])
        XCTAssertEqual(after.int("c"), 7)

        try database.execute("ALTER TABLE t RENAME COLUMN b TO renamed")
        let renamed = try XCTUnwrap(database.query("SELECT * FROM t").first)
        XCTAssertEqual(renamed.columns, ["a", "renamed", "c"])
        XCTAssertEqual(renamed.text("renamed"), "x")
        XCTAssertNil(renamed.text("b"))
    }
}
