import Store
import XCTest

final class ParameterBindingTests: XCTestCase {
    private var database: Database!

    override func setUpWithError() throws {
        database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE v (id INTEGER PRIMARY KEY, value ANY) STRICT")
    }

    private func roundTrip(_ value: SQLValue, file: StaticString = #filePath, line: UInt = #line) throws {
        try database.execute("DELETE FROM v")
        try database.execute("INSERT INTO v (id, value) VALUES (?, ?)", [.integer(1), value])
        let rows = try database.query("SELECT value FROM v WHERE id = ?", [.integer(1)])
        XCTAssertEqual(rows.count, 1, file: file, line: line)
        XCTAssertEqual(rows.first?["value"], value, file: file, line: line)
    }

    func testEveryValueTypeRoundTrips() throws {
        try roundTrip(.null)
        try roundTrip(.integer(0))
        try roundTrip(.integer(Int64.min))
        try roundTrip(.integer(Int64.max))
        try roundTrip(.real(-1.5))
        try roundTrip(.text(""))
        try roundTrip(.text("plain"))
        try roundTrip(.text("ünïcødé ✓ 🇪🇺"))
        try roundTrip(.text("embedded\u{0}nul"))
        try roundTrip(.text(#"{"sub":"https://example.org","a":[1,2]}"#))
        try roundTrip(.blob([]))
        try roundTrip(.blob([0, 1, 2, 0, 255]))
        try roundTrip(.blob(Array(repeating: 0xAB, count: 100_000)))
    }

    /// Cached statements keep small bound copies until the next bind (only large ones are
    /// cleared at once): every bind replaces all of them, so no earlier value leaks into a
    /// later use, whatever the sizes in between.
    func testReusedStatementsSeeOnlyTheirOwnParameters() throws {
        for value: SQLValue in [.text("small"), .blob(Array(repeating: 1, count: 5_000)), .null, .text(String(repeating: "x", count: 2_000)),
                                .integer(7), .text("again")] {
            try roundTrip(value)
            XCTAssertEqual(try database.query("SELECT COUNT(*) AS n FROM v WHERE value IS ?", [value]).first?.int("n"),
                           1)
            XCTAssertEqual(try database.query("SELECT COUNT(*) AS n FROM v WHERE id = ?", [.integer(2)]).first?.int("n"), 0)
        }
    }

    func testTypedAccessors() throws {
        try database.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n TEXT)")
        try database.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)",
                             [.integer(7), .real(2.5), .text("x"), .blob([9]), .null])
        let row = try XCTUnwrap(try database.query("SELECT * FROM t").first)
        XCTAssertEqual(row.columns, ["i", "r", "s", "b", "n"])
        XCTAssertEqual(row.int("i"), 7)
        XCTAssertEqual(row.double("r"), 2.5)
        XCTAssertEqual(row.text("s"), "x")
        XCTAssertEqual(row.blob("b"), [9])
        XCTAssertNil(row.text("n"))
        XCTAssertEqual(row["n"], .null)
        XCTAssertEqual(row["missing"], .null)
        XCTAssertNil(row.int("s"))
    }

    func testOptionalInitializersBindNull() throws {
        XCTAssertEqual(SQLValue(nil as Int64?), .null)
        XCTAssertEqual(SQLValue(nil as String?), .null)
        XCTAssertEqual(SQLValue(Int64(3)), .integer(3))
        XCTAssertEqual(SQLValue("a"), .text("a"))
    }

    func testParametersAreNeverInterpretedAsSQL() throws {
        let hostile = "x'); DROP TABLE v; --"
        try database.execute("INSERT INTO v (id, value) VALUES (?, ?)", [.integer(1), .text(hostile)])
        XCTAssertEqual(try database.query("SELECT value FROM v").first?.text("value"), hostile)
        XCTAssertEqual(try database.query("SELECT count(*) AS n FROM v").first?.int("n"), 1)
    }

    func testParameterCountMismatchIsRefused() {
        XCTAssertThrowsError(try database.execute("INSERT INTO v (id, value) VALUES (?, ?)", [.integer(1)]))
        XCTAssertThrowsError(try database.execute("INSERT INTO v (id, value) VALUES (?, ?)",
                                                  [.integer(1), .null, .null]))
    }

    func testSecondStatementIsRefusedNotIgnored() throws {
        XCTAssertThrowsError(try database.execute("INSERT INTO v (id) VALUES (1); DROP TABLE v"))
        XCTAssertEqual(try database.query("SELECT count(*) AS n FROM v").first?.int("n"), 0)
        // Trailing semicolons, whitespace and comments are not a second statement.
        try database.execute("INSERT INTO v (id) VALUES (2); -- done\n ")
        XCTAssertEqual(try database.query("SELECT count(*) AS n FROM v").first?.int("n"), 1)
    }

    func testErrorsAreMapped() throws {
        try database.execute("INSERT INTO v (id) VALUES (1)")
        XCTAssertThrowsError(try database.execute("INSERT INTO v (id) VALUES (1)")) { error in
            guard case StoreError.constraint = error else { return XCTFail("unexpected \(error)") }
        }
        XCTAssertThrowsError(try database.execute("SELEC nonsense")) { error in
            guard case StoreError.sqlite(let code, let message) = error else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertEqual(code, 1) // SQLITE_ERROR
            XCTAssertTrue(message.contains("syntax"), message)
        }
        // The connection (and the cached statement) stays usable after a failure.
        try database.execute("INSERT INTO v (id) VALUES (2)")
        XCTAssertEqual(try database.query("SELECT count(*) AS n FROM v").first?.int("n"), 2)
    }

    func testCountingChanges() throws {
        for id in 1...3 { try database.execute("INSERT INTO v (id) VALUES (?)", [.integer(Int64(id))]) }
        XCTAssertEqual(try database.executeCountingChanges("UPDATE v SET value = 1 WHERE id > ?", [.integer(1)]), 2)
        XCTAssertEqual(try database.executeCountingChanges("DELETE FROM v WHERE id = 99"), 0)
    }
}
