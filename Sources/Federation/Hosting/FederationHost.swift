import Support
import JOSE
import JSON
import Logging
import Store

/// All entities this process hosts, their keys and state: the domain object the federation
/// endpoints ask. It is immutable apart from its caches; the assembly replaces the whole host when
/// entity files, keys or revocations change, which also drops every cache at once.
public final class FederationHost: @unchecked Sendable {
    public let entities: [String: HostedEntity]
    public let keys: KeyProvider
    public let clock: Clock
    public let database: Database
    public let fetcher: StatementFetcher
    public let logger: Logger
    /// Superior entity ID → its subordinates (explicit entries plus local entities naming it in `authority_hints`).
    public let subordinatesBySuperior: [String: [String: SubordinateEntry]]
    /// Trust marks local issuers give each subject, by subject entity ID.
    let issuancesBySubject: [String: [(issuer: String, issuance: TrustMarkIssuance)]]
    /// Hosted Trust Anchors, found once: a resolve must not scan 100,000 entities for them.
    let trustAnchorIDs: [String]
    /// Hosted Trust Anchors and every entity with subordinates: the entities that serve fetch,
    /// list and resolve. A few among 100,000, asked about a dozen times per resolve, so one
    /// lookup in a small set rather than two in the tables of every entity.
    private let superiorIDs: Set<String>
    /// Statements signed here, within a byte budget.
    let cache: SignedStatementCache
    /// Statements of other servers (fetched, cached until `exp`, failures remembered for 10 s).
    public let remote: RemoteStatementSource
    /// Parsed and merged metadata policies, shared by every resolve on this host.
    let policyCache = MetadataPolicyCache()
    /// Entity identifiers the statements signed here have already checked.
    let checkedIdentifiers = CheckedIdentifiers()
    /// Answers of remote trust mark issuers' status endpoints, kept for a second.
    public let trustMarkStatusChecker: TrustMarkStatusChecker
    let limits: ChainLimits
    /// This server's origin (`FetchAllowList.origin` of its base URL): fetches for it are
    /// answered in-process (FederationHost+OwnOrigin.swift). Nil: none is known (tests).
    let ownOrigin: String?

    /// Holds every subordinate statement of a federation of 100,000 leaves (about 895 bytes each
    /// as `SignedStatementCache.cost(of:key:keyShared:)` counts them, 85 MiB) with room for the
    /// entity configurations, resolve responses and statements about superiors used meanwhile.
    public static let defaultStatementCacheBytes = 96 << 20

    /// `statementCacheBytes`: budget of the signed-statement cache (`defaultStatementCacheBytes`).
    /// `remote`: pass one to keep remote statements (and remembered failures) across hosts when
    /// the assembly replaces the host; by default one over `fetcher` and the database is made.
    /// `trustMarkStatusClient`: how remote trust mark issuers' status endpoints are asked (nil:
    /// they cannot be, and marks whose issuer publishes one are dropped). `baseURL`: this server's
    /// public base URL; what is under its origin is never fetched over HTTP.
    public init(entities list: [HostedEntity], keys: KeyProvider, clock: Clock, database: Database,
                fetcher: StatementFetcher, logger: Logger = Logger(label: "trustbed.federation"),
                limits: ChainLimits = ChainLimits(), statementCacheBytes: Int = FederationHost.defaultStatementCacheBytes,
                remote: RemoteStatementSource? = nil, trustMarkStatusClient: TrustMarkStatusClient? = nil,
                baseURL: String? = nil) {
        ownOrigin = baseURL.flatMap(FetchAllowList.origin)
        var byID: [String: HostedEntity] = [:]
        byID.reserveCapacity(list.count)
        for e in list { byID[e.entityID] = e }
        entities = byID
        trustAnchorIDs = list.filter(\.isTrustAnchor).map(\.entityID).sorted()
        cache = SignedStatementCache(budget: statementCacheBytes)
        trustMarkStatusChecker = TrustMarkStatusChecker(client: trustMarkStatusClient)
        self.keys = keys
        self.clock = clock
        self.database = database
        self.logger = logger
        self.limits = limits

        var subs: [String: [String: SubordinateEntry]] = [:]
        for e in list {
            for (id, entry) in e.subordinates { subs[e.entityID, default: [:]][id] = entry }
        }
        for e in list {
            for hint in e.authorityHints where byID[hint] != nil && subs[hint]?[e.entityID] == nil {
                subs[hint, default: [:]][e.entityID] = SubordinateEntry(entityID: e.entityID)
            }
        }
        subordinatesBySuperior = subs
        superiorIDs = Set(byID.values.filter(\.isTrustAnchor).map(\.entityID)).union(subs.keys)

        var issuances: [String: [(issuer: String, issuance: TrustMarkIssuance)]] = [:]
        for e in list {
            for i in e.trustMarksIssued {
                for s in i.subjects { issuances[s, default: []].append((e.entityID, i)) }
            }
        }
        issuancesBySubject = issuances
        self.fetcher = fetcher
        self.remote = remote ?? RemoteStatementSource(fetcher: fetcher, store: SQLiteStatementStore(database: database), clock: clock)
    }

    public func entity(_ entityID: String) -> HostedEntity? { entities[entityID] }

    /// Superiors serve fetch/list/resolve; a Trust Anchor is always one, even with no subordinates yet.
    public func isSuperior(_ entityID: String) -> Bool { superiorIDs.contains(entityID) }

    public func subordinates(of superiorID: String) -> [String: SubordinateEntry] {
        subordinatesBySuperior[superiorID] ?? [:]
    }

    /// The federation endpoints an entity serves, in the order its metadata lists them.
    /// Worked out per call from two lookups rather than kept: a table of 100,000 small arrays
    /// cost megabytes for what dispatch finds in constant time anyway.
    public func endpoints(of entityID: String) -> [FederationEndpoint] {
        guard let e = entities[entityID] else { return [] }
        var out: [FederationEndpoint] = []
        if isSuperior(entityID) { out += [.fetch, .list, .resolve] }
        if e.issuesTrustMarks { out += [.trustMark, .trustMarkStatus, .trustMarkList] }
        out.append(.historicalKeys)
        return out
    }

    func now() -> Int64 { clock.now() }
}

/// Bounds on chain building, so a hostile or broken federation cannot make a resolve run forever.
public struct ChainLimits: Sendable {
    public var maxDepth: Int = 8
    public var maxAuthorityHints: Int = 8
    public var maxStatementsFetched: Int = 64
    public var clockSkew: Int64 = 60
    /// Seconds a whole resolve (all its fetches, and waiting for fetch slots) may take.
    public var resolveBudget: Double = 10
    public init() {}
}
