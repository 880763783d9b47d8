import Support

/// What a cached signed JWT answers; a value, so looking one up allocates nothing (apart from
/// the two rare indirect cases). The cache stores every key twice (in its list and its index),
/// and the widest case sets the size of all: with the resolve and trust mark cases inline, a
/// key took 48 bytes where a subordinate statement's needs 32 (100,000 of them at 100,000 leaves).
enum StatementKey: Hashable, Sendable {
    case entityConfiguration(String)
    case subordinateStatement(issuer: String, subject: String)
    indirect case trustMark(issuer: String, type: String, subject: String)
    case historicalKeys(String)
    indirect case resolve(resolver: String, subject: String, trustAnchors: [String], entityTypes: [String])

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
/// (the endpoints derive the media type from it), and for entity statements a resolve has used,
/// the statement built from the signed claims, so local chains neither parse nor verify it.
struct SignedJWT: Sendable {
    let compact: String
    let type: String
    /// Until when the cache serves this JWT (seconds since 1970).
    let refreshAt: Int64
    /// Boxed: an `EntityStatement` is some 300 bytes of fields, and held inline it would make
    /// every slot of the cache that large, also the many without one.
    private let parsed: ParsedStatement?

    /// Entity statements that chain building asked for; trusted because this process signed it.
    var statement: EntityStatement? { parsed?.statement }

    init(compact: String, type: String, refreshAt: Int64, statement: EntityStatement? = nil) {
        self.compact = compact
        self.type = type
        self.refreshAt = refreshAt
        parsed = statement.map(ParsedStatement.init)
    }

    /// The same JWT without its parsed statement: what the cache keeps of a statement whose
    /// parsed form only one chain needs.
    var withoutStatement: SignedJWT { SignedJWT(compact: compact, type: type, refreshAt: refreshAt) }

    private final class ParsedStatement: Sendable {
        let statement: EntityStatement
        init(_ statement: EntityStatement) { self.statement = statement }
    }
}

/// Signed artifacts keyed by what they answer, kept until shortly before they expire so a hot
/// endpoint signs once per lifetime instead of once per request. Bounded by a byte budget with
/// approximate LRU eviction (see `ClockCache`), because keys include client-chosen query values
/// and a server may host 100,000 entities. Invalidation is by replacing the whole host (see
/// `FederationHost`), so entries are never invalidated one by one.
final class SignedStatementCache: Sendable {
    static let defaultBudget = 64 << 20
    /// Per-entry memory besides the JWT's bytes and the key's: the list node (112 bytes) and the
    /// index bucket (44), each with the slack of arrays and tables that grow by doubling (up to
    /// twice that), and the JWT's string header and malloc rounding (about 48). The key's IDs
    /// are mostly shared with the host's own (see `signedSubordinateStatement`) but still
    /// counted in `StatementKey.cost`, which is the margin. It was 448 while a key took 48 bytes
    /// and kept its own copy of the subject.
    static let entryOverhead = 320
    /// A typical entry (a subordinate statement about a leaf), to size the cache's tables once:
    /// at 100,000 leaves that left 8 MiB less RSS after a sweep than tables grown by doubling
    /// (296.7 vs 304 MiB, one run each, 112 MiB budget).
    static let typicalEntryCost = 1100
    /// Bytes a parsed statement adds per byte of its JWT: its claims tree and the typed fields
    /// sharing it (keys, metadata). Only statements about superiors keep one (see `statement`).
    static let parsedFactor = 3

    private let entries: ClockCache<StatementKey, SignedJWT>

    init(budget: Int = SignedStatementCache.defaultBudget) {
        entries = ClockCache(budget: budget, expectedEntryCost: Self.typicalEntryCost)
    }

    /// Returns the cached JWT for `key` if still fresh at `now`, else builds, stores and returns a
    /// new one. `build` returns the compact JWT (of JWT type `type`) and the time until which it
    /// may be served. For entity statements use `statement(for:now:parsed:build:parse:)`.
    func value(
        for key: StatementKey, now: Int64, type: String, build: () throws(FederationError) -> (String, Int64)
    ) throws(FederationError) -> SignedJWT {
        if let hit = entries.get(key), hit.refreshAt > now { return hit }
        let (compact, refreshAt) = try build()
        let value = SignedJWT(compact: Self.exactCopy(compact), type: type, refreshAt: refreshAt)
        entries.set(key, value, cost: Self.cost(of: value, key: key))
        return value
    }

    /// An entity statement: the cached one for `key` if still fresh at `now`, else the one `build`
    /// signs. With `parsed` (chain building) the result carries the parsed statement: `parse`
    /// builds it from the signed claims, or, for a cached entry kept without one, a full decode
    /// of the JWT. `keepParsed`: whether the cache keeps the parsed statement too. Statements
    /// about superiors are in every chain below them and are kept parsed; one about a leaf is
    /// in that leaf's chains only, and with 100,000 leaves keeping them parsed would multiply
    /// the cache's memory for answers the resolve cache mostly gives anyway.
    func statement(
        for key: StatementKey, now: Int64, parsed: Bool, keepParsed: Bool,
        build: () throws(FederationError) -> SignedStatementDraft, parse: (SignedStatementDraft) -> EntityStatement?
    ) throws(FederationError) -> SignedJWT {
        if let hit = entries.get(key), hit.refreshAt > now {
            guard parsed && hit.statement == nil else { return hit }
            let upgraded = SignedJWT(compact: hit.compact, type: hit.type, refreshAt: hit.refreshAt,
                                     statement: try? EntityStatement.decode(hit.compact))
            if keepParsed && upgraded.statement != nil { entries.set(key, upgraded, cost: Self.cost(of: upgraded, key: key)) }
            return upgraded
        }
        let built = try build()
        let draft = SignedStatementDraft(compact: Self.exactCopy(built.compact), keyID: built.keyID, claims: built.claims,
                                         jwks: built.jwks, refreshAt: built.refreshAt)
        let value = SignedJWT(compact: draft.compact, type: FederationType.entityStatement, refreshAt: draft.refreshAt,
                              statement: parsed ? parse(draft) : nil)
        let kept = keepParsed ? value : value.withoutStatement
        entries.set(key, kept, cost: Self.cost(of: kept, key: key))
        return value
    }

    /// `s` in storage of exactly its size. A signed JWT is built by appending its parts, and a
    /// string grows by doubling, so one fresh from the signer holds up to twice its length
    /// (malloc_usable_size: 12,600 bytes for a 6,340-byte resolve response). Copied once when
    /// cached, the cache's memory is what its budget counts.
    static func exactCopy(_ s: String) -> String {
        let count = s.utf8.count
        return String(unsafeUninitializedCapacity: count) { buffer in
            _ = buffer.initialize(fromContentsOf: s.utf8)
            return count
        }
    }

    /// The JWT, its parsed statement if kept, the key and the fixed overhead.
    static func cost(of value: SignedJWT, key: StatementKey) -> Int {
        let jwt = value.compact.utf8.count
        return jwt + (value.statement == nil ? 0 : parsedFactor * jwt) + key.cost + entryOverhead
    }

    var count: Int { entries.count }
    var bytes: Int { entries.bytes }
    var budget: Int { entries.budget }

    /// Serve-until time for a statement valid from `iat` to `exp`: re-sign once 90% of its lifetime has passed.
    static func refreshTime(iat: Int64, exp: Int64) -> Int64 { iat + max(1, (exp - iat) * 9 / 10) }
}
