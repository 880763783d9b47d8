import CSQLite

/// Prepared statements keyed by their SQL text, so the hot queries of the HTTP handlers are
/// parsed once. Owned by `Database` and only touched under its lock.
struct StatementCache {
    // Bounded because a caller that builds SQL dynamically (e.g. `IN (?, ?, …)` lists) would
    // otherwise grow the cache without limit. Clearing everything at the bound is crude but
    // the repositories use a few dozen fixed strings, so it never happens in practice.
    private static let capacity = 256
    private var statements: [String: OpaquePointer] = [:]
    /// Column names and positions by statement, made on its first query rather than rebuilt
    /// (a String and a dictionary entry per column) on every query of every issuance (measured:
    /// see docs/performance.md). Kept with SQLite's count of automatic re-preparations, so a
    /// schema change (which can change a `SELECT *`) makes it again.
    private var layouts: [OpaquePointer: (layout: Statement.ColumnLayout, reprepares: Int32)] = [:]

    /// The cached statement for `sql`, preparing and caching it on first use.
    mutating func statement(for sql: String, on connection: OpaquePointer) throws(StoreError) -> Statement {
        if let pointer = statements[sql] {
            return Statement(pointer: pointer, connection: connection)
        }
        if statements.count >= Self.capacity { finalizeAll() }
        let statement = try Self.prepare(sql, on: connection)
        statements[sql] = statement.pointer
        return statement
    }

    /// The column layout of a statement this cache prepared.
    mutating func layout(of statement: Statement) -> Statement.ColumnLayout {
        let reprepares = sqlite3_stmt_status(statement.pointer, Int32(SQLITE_STMTSTATUS_REPREPARE), 0)
        if let known = layouts[statement.pointer], known.reprepares == reprepares { return known.layout }
        let layout = statement.columnLayout()
        layouts[statement.pointer] = (layout, reprepares)
        return layout
    }

    mutating func finalizeAll() {
        for pointer in statements.values { sqlite3_finalize(pointer) }
        statements.removeAll()
        layouts.removeAll()
    }

    /// Prepares exactly one statement. Text after the first statement is refused rather than
    /// ignored, because SQLite would silently drop it.
    static func prepare(_ sql: String, on connection: OpaquePointer) throws(StoreError) -> Statement {
        var pointer: OpaquePointer?
        var remainder: UnsafePointer<CChar>?
        let code = sql.withCString { text in
            let result = sqlite3_prepare_v2(connection, text, -1, &pointer, &remainder)
            // An empty statement or one containing only comments prepares to nil.
            if result == SQLITE_OK, pointer != nil, let tail = remainder, tail.pointee != 0,
               Self.containsStatement(tail, on: connection) {
                return SQLITE_MISUSE
            }
            return result
        }
        guard code == SQLITE_OK, let pointer else {
            let error: StoreError = code == SQLITE_MISUSE
                ? .sqlite(code: SQLITE_MISUSE, message: "only one SQL statement per call: \(sql)")
                : code == SQLITE_OK
                    ? .sqlite(code: SQLITE_MISUSE, message: "no SQL statement in: \(sql)")
                    : StoreError(code: code, connection: connection)
            sqlite3_finalize(pointer)
            throw error
        }
        return Statement(pointer: pointer, connection: connection)
    }

    /// Whether `text` holds anything besides whitespace, semicolons and comments.
    private static func containsStatement(_ text: UnsafePointer<CChar>, on connection: OpaquePointer) -> Bool {
        var pointer: OpaquePointer?
        let code = sqlite3_prepare_v2(connection, text, -1, &pointer, nil)
        defer { sqlite3_finalize(pointer) }
        return code != SQLITE_OK || pointer != nil
    }
}
