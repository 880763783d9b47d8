/// One SQLite value, used both for bound parameters and for result columns.
/// Values are always bound, never spliced into SQL text, so callers cannot inject SQL.
public enum SQLValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

extension SQLValue {
    /// `.null` for nil, so optional columns bind without a switch at every call site.
    public init(_ value: Int64?) {
        self = value.map(SQLValue.integer) ?? .null
    }

    /// `.null` for nil, so optional columns bind without a switch at every call site.
    public init(_ value: String?) {
        self = value.map(SQLValue.text) ?? .null
    }
}
