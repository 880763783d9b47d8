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

    /// Heap bytes the key's own strings (and boxes) take, for the cache budget; a string the
    /// key shares with the host costs nothing extra, so callers that store the host's strings
    /// say so (see `SignedStatementCache.statement`).
    var ownedBytes: Int {
        typealias C = SignedStatementCache
        switch self {
        case .entityConfiguration(let id), .historicalKeys(let id): return C.heapBytes(id)
        case .subordinateStatement(let i, let s): return C.heapBytes(i) + C.heapBytes(s)
        case .trustMark(let i, let t, let s): return C.boxBytes + C.heapBytes(i) + C.heapBytes(t) + C.heapBytes(s)
        case .resolve(let r, let s, let tas, let types):
            return C.boxBytes + C.heapBytes(r) + C.heapBytes(s) + C.heapBytes(tas) + C.heapBytes(types)
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
    static let defaultBudget = FederationHost.defaultStatementCacheBytes
    /// A typical entry (a subordinate statement about a leaf), to reserve the cache's entry
    /// arrays once rather than grow them by doubling, which leaves up to half of each unused
    /// (measured: see docs/performance.md).
    static let typicalEntryCost = 900
    /// Bytes a parsed statement adds per byte of its JWT: its claims tree and the typed fields
    /// sharing it (keys, metadata). Only statements about superiors keep one (see `statement`).
    static let parsedFactor = 3

    private let entries: ClockCache<StatementKey, SignedJWT>

    init(budget: Int = SignedStatementCache.defaultBudget) {
        entries = ClockCache(budget: budget, expectedEntryCost: Self.typicalEntryCost)
    }

    /// Where a new entry is stored: the key equal to the one looked up, but holding the host's
    /// own strings where it can (a request's copy of an entity ID would stay alive with the
    /// entry), and whether all its strings are the host's, which then cost the cache nothing.
    typealias StoredKey = (key: StatementKey, sharesHostStrings: Bool)

    /// Returns the cached JWT for `key` if still fresh at `now`, else builds, stores and returns a
    /// new one. `build` returns the compact JWT (of JWT type `type`) and the time until which it
    /// may be served. For entity statements use `statement(for:now:parsed:build:parse:)`.
    func value(
        for key: StatementKey, now: Int64, type: String, build: () throws(FederationError) -> (String, Int64)
    ) throws(FederationError) -> SignedJWT {
        if let hit = entries.get(key), hit.refreshAt > now { return hit }
        let (compact, refreshAt) = try build()
        let value = SignedJWT(compact: Self.exactCopy(compact), type: type, refreshAt: refreshAt)
        entries.set(key, value, cost: Self.cost(of: value, key: key, keyShared: false))
        return value
    }

    /// An entity statement: the cached one for `key` if still fresh at `now`, else the one `build`
    /// signs. With `parsed` (chain building) the result carries the parsed statement: `parse`
    /// builds it from the signed claims, or, for a cached entry kept without one, a full decode
    /// of the JWT. `keepParsed`: whether the cache keeps the parsed statement too. Statements
    /// about superiors are in every chain below them and are kept parsed; one about a leaf is
    /// in that leaf's chains only, and with 100,000 leaves keeping them parsed would multiply
    /// the cache's memory for answers the resolve cache mostly gives anyway. `stored`: see
    /// `StoredKey` (by default `key` itself, its strings counted).
    ///
    /// `keepParsed` and `stored` are evaluated only when an entry is stored: a hit (every
    /// cached `fetch`) costs one lookup and nothing else.
    func statement(
        for key: StatementKey, now: Int64, parsed: Bool, keepParsed: @autoclosure () -> Bool,
        stored: () -> StoredKey? = { nil },
        build: () throws(FederationError) -> SignedStatementDraft, parse: (SignedStatementDraft) -> EntityStatement?
    ) throws(FederationError) -> SignedJWT {
        func store(_ value: SignedJWT) {
            let (storedKey, shared) = stored() ?? (key, false)
            entries.set(storedKey, value, cost: Self.cost(of: value, key: storedKey, keyShared: shared))
        }
        if let hit = entries.get(key), hit.refreshAt > now {
            guard parsed && hit.statement == nil else { return hit }
            let upgraded = SignedJWT(compact: hit.compact, type: hit.type, refreshAt: hit.refreshAt,
                                     statement: try? EntityStatement.decode(hit.compact))
            if keepParsed() && upgraded.statement != nil { store(upgraded) }
            return upgraded
        }
        let built = try build()
        let draft = SignedStatementDraft(compact: Self.exactCopy(built.compact), keyID: built.keyID, claims: built.claims,
                                         jwks: built.jwks, refreshAt: built.refreshAt)
        let value = SignedJWT(compact: draft.compact, type: FederationType.entityStatement, refreshAt: draft.refreshAt,
                              statement: parsed ? parse(draft) : nil)
        store(keepParsed() ? value : value.withoutStatement)
        return value
    }

    /// `s` in storage of exactly its size. A signed JWT is built by appending its parts, and a
    /// string grows by doubling, so one fresh from the signer holds up to twice its length.
    /// Copied once when cached, the cache's memory is what its budget counts.
    static func exactCopy(_ s: String) -> String {
        let count = s.utf8.count
        return String(unsafeUninitializedCapacity: count) { buffer in
            _ = buffer.initialize(fromContentsOf: s.utf8)
            return count
        }
    }

    /// What an entry takes in memory: the JWT's storage, its parsed statement if kept, the
    /// key's own strings unless they are the host's, and the cache's bookkeeping: what a
    /// sweep's heap grows by, besides the entry arrays reserved up front (checked with massif:
    /// see docs/performance.md).
    static func cost(of value: SignedJWT, key: StatementKey, keyShared: Bool) -> Int {
        let jwt = value.compact.utf8.count
        return heapBytes(value.compact) + (value.statement == nil ? 0 : parsedFactor * jwt) + (keyShared ? 0 : key.ownedBytes)
            + ClockCache<StatementKey, SignedJWT>.entryOverhead
    }

    /// The heap a string's storage takes: none for a small string (up to 15 UTF-8 bytes are
    /// kept inline), else a 32-byte object header, the bytes and a terminating NUL in one
    /// malloc chunk (8 bytes of malloc's own, rounded up to 16).
    static func heapBytes(_ s: String) -> Int {
        let count = s.utf8.count
        return count <= 15 ? 0 : mallocChunk(32 + count + 1)
    }

    static func heapBytes(_ strings: [String]) -> Int {
        strings.isEmpty ? 0 : mallocChunk(32 + 16 * strings.count) + strings.reduce(0) { $0 + heapBytes($1) }
    }

    /// An indirect enum case's box: object header and payload.
    static let boxBytes = 96

    private static func mallocChunk(_ bytes: Int) -> Int { max(32, (bytes + 8 + 15) & ~15) }

    var count: Int { entries.count }
    var bytes: Int { entries.bytes }
    var budget: Int { entries.budget }

    /// Serve-until time for a statement valid from `iat` to `exp`: re-sign once 90% of its lifetime has passed.
    static func refreshTime(iat: Int64, exp: Int64) -> Int64 { iat + max(1, (exp - iat) * 9 / 10) }
}
