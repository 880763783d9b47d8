import Support

/// What a cached signed JWT answers; a value, so looking one up allocates nothing.
enum StatementKey: Hashable, Sendable {
    case entityConfiguration(String)
    case subordinateStatement(issuer: String, subject: String)
    case trustMark(issuer: String, type: String, subject: String)
    case historicalKeys(String)
    case resolve(resolver: String, subject: String, trustAnchors: [String], entityTypes: [String])

    /// Rough bytes of the key itself, for the cache budget.
    var cost: Int {
        switch self {
        case .entityConfiguration(let id), .historicalKeys(let id): return id.utf8.count
        case .subordinateStatement(let i, let s): return i.utf8.count + s.utf8.count
        case .trustMark(let i, let t, let s): return i.utf8.count + t.utf8.count + s.utf8.count
        case .resolve(let r, let s, let tas, let types):
            return r.utf8.count + s.utf8.count + tas.reduce(0) { $0 + $1.utf8.count } + types.reduce(0) { $0 + $1.utf8.count }
        }
    }
}

/// A JWT this host signed: the compact form (what endpoints serve and chains embed), its `typ`
/// (the endpoints derive the media type from it), and for entity statements the statement
/// parsed once when signed, so local chains neither re-parse nor re-verify it.
struct SignedJWT: Sendable {
    let compact: String
    let type: String
    /// Until when the cache serves this JWT (seconds since 1970).
    let refreshAt: Int64
    /// Entity statements only; trusted because this process signed it.
    let statement: EntityStatement?
}

/// Signed artifacts keyed by what they answer, kept until shortly before they expire so a hot
/// endpoint signs once per lifetime instead of once per request. Bounded by a byte budget with
/// approximate LRU eviction (see `ClockCache`), because keys include client-chosen query values
/// and a server may host 100,000 entities. Invalidation is by replacing the whole host (see
/// `FederationHost`), so entries are never invalidated one by one.
final class SignedStatementCache: Sendable {
    static let defaultBudget = 64 << 20
    /// Rough per-entry overhead besides the JWT: key, slot, index entry, string headers.
    static let entryOverhead = 256

    private let entries: ClockCache<StatementKey, SignedJWT>

    init(budget: Int = SignedStatementCache.defaultBudget) {
        entries = ClockCache(budget: budget)
    }

    /// Returns the cached JWT for `key` if still fresh at `now`, else builds, stores and returns a
    /// new one. `build` returns the compact JWT (of JWT type `type`) and the time until which it
    /// may be served.
    func value(
        for key: StatementKey, now: Int64, type: String, build: () throws(FederationError) -> (String, Int64)
    ) throws(FederationError) -> SignedJWT {
        if let hit = entries.get(key), hit.refreshAt > now { return hit }
        let (compact, refreshAt) = try build()
        // Parsed once here, per signature, instead of once per chain that embeds it.
        let statement = type == FederationType.entityStatement ? try? EntityStatement.decode(compact) : nil
        let value = SignedJWT(compact: compact, type: type, refreshAt: refreshAt, statement: statement)
        entries.set(key, value, cost: Self.cost(of: value, key: key))
        return value
    }

    /// The compact JWT, plus about twice that again for a parsed statement (decoded payload,
    /// claims tree, keys), plus the key and a fixed overhead.
    static func cost(of value: SignedJWT, key: StatementKey) -> Int {
        let jwt = value.compact.utf8.count
        // Measured with heaptrack at 20,000 subordinate statements: a parsed statement (claims
        // as a JSON tree, JWS parts, decoded keys) costs about four times its compact JWT.
        return jwt + (value.statement == nil ? 0 : 4 * jwt) + key.cost + entryOverhead
    }

    var count: Int { entries.count }
    var bytes: Int { entries.bytes }
    var budget: Int { entries.budget }

    /// Serve-until time for a statement valid from `iat` to `exp`: re-sign once 90% of its lifetime has passed.
    static func refreshTime(iat: Int64, exp: Int64) -> Int64 { iat + max(1, (exp - iat) * 9 / 10) }
}
