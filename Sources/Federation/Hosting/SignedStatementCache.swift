import Support
import HTTP

/// What a cached signed JWT answers; a value, so looking one up allocates nothing.
enum StatementKey: Hashable, Sendable {
    case entityConfiguration(String)
    case subordinateStatement(issuer: String, subject: String)
    case trustMark(issuer: String, type: String, subject: String)
    case historicalKeys(String)
    case resolve(resolver: String, subject: String, trustAnchors: [String], entityTypes: [String])
}

/// A JWT this host signed: the compact form for use inside the process, and the HTTP answer
/// that serves it, built once so a cache hit costs no copy of the body.
struct SignedJWT: Sendable {
    let compact: String
    let response: HTTPResponse
    /// Until when the cache serves this JWT (seconds since 1970).
    let refreshAt: Int64

    init(_ compact: String, type: String, refreshAt: Int64) {
        self.compact = compact
        self.refreshAt = refreshAt
        response = HTTPResponse.jwt(compact, contentType: FederationType.contentType(type)).prepared()
    }
}

/// Signed artifacts keyed by what they answer, kept until shortly before they expire so a hot
/// endpoint signs once per lifetime instead of once per request. Invalidation is by replacing the
/// whole host (see `FederationHost`), so entries never need to be evicted one by one.
final class SignedStatementCache: @unchecked Sendable {
    private let entries = Locked<[StatementKey: SignedJWT]>([:])
    /// Bound on entries so query strings chosen by clients cannot grow memory without limit.
    private let capacity: Int

    init(capacity: Int = 4096) { self.capacity = capacity }

    /// Returns the cached JWT for `key` if still fresh at `now`, else builds, stores and returns a
    /// new one. `build` returns the compact JWT (of JWT type `type`) and the time until which it
    /// may be served.
    func value(
        for key: StatementKey, now: Int64, type: String, build: () throws(FederationError) -> (String, Int64)
    ) throws(FederationError) -> SignedJWT {
        if let hit = entries.read({ $0[key] }), hit.refreshAt > now { return hit }
        let (compact, refreshAt) = try build()
        let value = SignedJWT(compact, type: type, refreshAt: refreshAt)
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = value
        }
        return value
    }

    /// Serve-until time for a statement valid from `iat` to `exp`: re-sign once 90% of its lifetime has passed.
    static func refreshTime(iat: Int64, exp: Int64) -> Int64 { iat + max(1, (exp - iat) * 9 / 10) }
}
