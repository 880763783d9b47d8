import CSQLite

/// A prepared statement: binding, stepping and reading columns. It does not own its lifetime
/// (the `StatementCache` or the caller finalizes it) and must only be used while the
/// `Database` lock is held, because SQLite reports errors per connection.
struct Statement {
    let pointer: OpaquePointer
    let connection: OpaquePointer

    /// Binds every parameter, refusing a count mismatch: SQLite would silently leave missing
    /// parameters NULL and ignore extra ones, which hides bugs in callers.
    func bind(_ parameters: [SQLValue]) throws(StoreError) {
        let expected = Int(sqlite3_bind_parameter_count(pointer))
        guard expected == parameters.count else {
            throw .sqlite(code: SQLITE_RANGE,
                          message: "statement takes \(expected) parameters, \(parameters.count) given")
        }
        for (offset, value) in parameters.enumerated() {
            try check(bind(value, at: Int32(offset + 1)))
        }
    }

    private func bind(_ value: SQLValue, at index: Int32) -> Int32 {
        switch value {
        case .null:
            return sqlite3_bind_null(pointer, index)
        case .integer(let number):
            return sqlite3_bind_int64(pointer, index, number)
        case .real(let number):
            return sqlite3_bind_double(pointer, index, number)
        case .text(let string):
            // Explicit byte length so text with embedded NUL bytes survives intact.
            return string.withCString { characters in
                sqlite3_bind_text64(pointer, index, characters, sqlite3_uint64(string.utf8.count),
                                    trustbed_sqlite_transient(), UInt8(SQLITE_UTF8))
            }
        case .blob(let bytes):
            // An empty array may have no base address, and binding a nil pointer stores NULL;
            // a zero-length blob keeps "empty" distinct from "absent".
            guard !bytes.isEmpty else { return sqlite3_bind_zeroblob(pointer, index, 0) }
            return bytes.withUnsafeBytes { raw in
                sqlite3_bind_blob64(pointer, index, raw.baseAddress, sqlite3_uint64(raw.count),
                                    trustbed_sqlite_transient())
            }
        }
    }

    /// Advances one step; true when a row is ready to read.
    func step() throws(StoreError) -> Bool {
        let code = sqlite3_step(pointer)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw StoreError(code: code, connection: connection)
        }
    }

    /// Column names in select order and, by name, their positions.
    typealias ColumnLayout = (names: [String], positions: [String: Int])

    /// The statement's column names and their positions.
    func columnLayout() -> ColumnLayout {
        let count = Int(sqlite3_column_count(pointer))
        var names: [String] = []
        var positions: [String: Int] = [:]
        names.reserveCapacity(count)
        for position in 0..<count {
            let name = sqlite3_column_name(pointer, Int32(position)).map { String(cString: $0) } ?? ""
            names.append(name)
            // First occurrence wins, as in most SQL clients, for queries with duplicate names.
            if positions[name] == nil { positions[name] = position }
        }
        return (names, positions)
    }

    func row(names: [String], positions: [String: Int]) -> Row {
        Row(columns: names, positions: positions, values: (0..<names.count).map { value(at: Int32($0)) })
    }

    private func value(at column: Int32) -> SQLValue {
        switch sqlite3_column_type(pointer, column) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(pointer, column))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(pointer, column))
        case SQLITE_TEXT:
            // Read the pointer before the length: SQLite's documented order, since fetching
            // the text may convert the value in place.
            let text = sqlite3_column_text(pointer, column)
            let count = Int(sqlite3_column_bytes(pointer, column))
            guard let text else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let bytes = sqlite3_column_blob(pointer, column)
            let count = Int(sqlite3_column_bytes(pointer, column))
            guard let bytes, count > 0 else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default:
            return .null
        }
    }

    /// Makes the statement reusable. Bound copies of `parameters` are dropped only when one is
    /// large, so a cached statement does not pin a big blob or text until its next use; small
    /// ones stay until the next `bind`, which replaces every parameter. Clearing them after
    /// every statement would add a call to every query of every issuance (measured: see
    /// docs/performance.md).
    func reset(bound parameters: [SQLValue]) {
        sqlite3_reset(pointer)
        if parameters.contains(where: \.isLarge) { sqlite3_clear_bindings(pointer) }
    }

    private func check(_ code: Int32) throws(StoreError) {
        guard code == SQLITE_OK else { throw StoreError(code: code, connection: connection) }
    }
}

extension SQLValue {
    /// Text or a blob big enough that a cached statement should not keep a copy of it.
    var isLarge: Bool {
        switch self {
        case .text(let text): text.utf8.count > 1_024
        case .blob(let bytes): bytes.count > 1_024
        case .null, .integer, .real: false
        }
    }
}

extension StoreError {
    /// Builds the error for a failed call on `connection`; must run before any other call on
    /// that connection overwrites its error message.
    init(code: Int32, connection: OpaquePointer?) {
        let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? "SQLite error \(code)"
        if code & 0xff == SQLITE_CONSTRAINT {
            self = .constraint(message)
        } else {
            self = .sqlite(code: code & 0xff, message: message)
        }
    }
}
