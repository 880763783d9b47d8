/// One result row. Columns are looked up by the name SQLite reports (the alias when the
/// query uses `AS`); an unknown name reads as `.null` so optional columns need no special case.
public struct Row: Sendable {
    /// Column names in select order.
    public let columns: [String]
    /// Values in select order.
    public let values: [SQLValue]
    // Shared by every row of one result set (copy-on-write), so lookups stay O(1) cheaply.
    private let positions: [String: Int]

    init(columns: [String], positions: [String: Int], values: [SQLValue]) {
        self.columns = columns
        self.positions = positions
        self.values = values
    }

    public subscript(_ column: String) -> SQLValue {
        guard let position = positions[column] else { return .null }
        return values[position]
    }

    /// The column as an integer, or nil when it is NULL or holds another type.
    public func int(_ column: String) -> Int64? {
        if case .integer(let value) = self[column] { return value }
        return nil
    }

    /// The column as a real number; integers widen, since SQLite stores whole reals as integers
    /// in columns with numeric affinity.
    public func double(_ column: String) -> Double? {
        switch self[column] {
        case .real(let value): return value
        case .integer(let value): return Double(value)
        default: return nil
        }
    }

    /// The column as text, or nil when it is NULL or holds another type.
    public func text(_ column: String) -> String? {
        if case .text(let value) = self[column] { return value }
        return nil
    }

    /// The column as bytes, or nil when it is NULL or holds another type.
    public func blob(_ column: String) -> [UInt8]? {
        if case .blob(let value) = self[column] { return value }
        return nil
    }
}
