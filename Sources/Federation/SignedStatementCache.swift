import Foundation

/// Signed artifacts keyed by what they answer, kept until shortly before they expire so a hot
/// endpoint signs once per lifetime instead of once per request. Invalidation is by replacing the
/// whole host (see `FederationHost`), so entries never need to be evicted one by one.
final class SignedStatementCache: @unchecked Sendable {
    private struct Entry { let value: String; let refreshAt: Int64 }
    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    /// Bound on entries so query strings chosen by clients cannot grow memory without limit.
    private let capacity: Int

    init(capacity: Int = 4096) { self.capacity = capacity }

    /// Returns the cached value for `key` if still fresh at `now`, else builds, stores and returns a new one.
    /// `build` returns the value and the time until which it may be served.
    func value(for key: String, now: Int64, build: () throws(FederationError) -> (String, Int64)) throws(FederationError) -> String {
        if let hit = lock.withLock({ entries[key] }), hit.refreshAt > now { return hit.value }
        let (value, refreshAt) = try build()
        lock.withLock {
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = Entry(value: value, refreshAt: refreshAt)
        }
        return value
    }

    /// Serve-until time for a statement valid from `iat` to `exp`: re-sign once 90% of its lifetime has passed.
    static func refreshTime(iat: Int64, exp: Int64) -> Int64 { iat + max(1, (exp - iat) * 9 / 10) }
}
