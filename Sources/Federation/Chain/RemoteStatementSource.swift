import Support

/// Durable storage for fetched statements (the server keeps them in SQLite so a restart does not
/// refetch a whole federation); a protocol so the resolver has no database dependency.
public protocol RemoteStatementStore: Sendable {
    /// The body stored for `url` if it has not expired at `now`.
    func statement(url: String, now: Int64) -> String?
    func save(url: String, body: String, expiresAt: Int64, fetchedAt: Int64)
}

/// Statements from other servers, over a `StatementFetcher`, kept in memory (within a byte
/// budget) and in an optional store until their `exp`. A fetch that fails is remembered for
/// `failureTTL` seconds, so a dead or hostile host costs one attempt per 10 s rather than one
/// per request.
public final class RemoteStatementSource: StatementSource, Sendable {
    public static let failureTTL: Int64 = 10
    public static let defaultMemoryBudget = 16 << 20

    private struct Failure: Sendable {
        let error: FederationError
        let until: Int64
    }

    /// What the caches know about a URL, without any network access.
    enum Lookup {
        case hit(EntityStatement)
        case failed(FederationError)
        case miss
    }

    public let fetcher: any StatementFetcher
    private let store: (any RemoteStatementStore)?
    private let clock: Clock
    private let statements: ClockCache<String, EntityStatement>
    private let failures: ClockCache<String, Failure>

    public init(fetcher: any StatementFetcher, store: (any RemoteStatementStore)? = nil, clock: Clock,
                memoryBudget: Int = RemoteStatementSource.defaultMemoryBudget) {
        self.fetcher = fetcher
        self.store = store
        self.clock = clock
        statements = ClockCache(budget: memoryBudget)
        failures = ClockCache(budget: max(1 << 16, memoryBudget / 16))
    }

    public func entityConfiguration(of entityID: String, deadline: Deadline) throws(FederationError) -> SourcedStatement {
        SourcedStatement(try statement(at: EntityURL.configuration(of: entityID), deadline: deadline))
    }

    public func subordinateStatement(superior: SourcedStatement, subject: String, deadline: Deadline) throws(FederationError) -> SourcedStatement {
        SourcedStatement(try statement(at: EntityURL.fetch(superior: superior.statement, subject: subject), deadline: deadline))
    }

    func lookup(_ url: String, now: Int64) -> Lookup {
        if let s = statements.get(url), s.expiresAt > now { return .hit(s) }
        if let f = failures.get(url), f.until > now { return .failed(f.error) }
        if let body = store?.statement(url: url, now: now), let s = try? EntityStatement.decode(body), s.expiresAt > now {
            statements.set(url, s, cost: Self.cost(of: s, url: url))
            return .hit(s)
        }
        return .miss
    }

    /// The statement at `url`: from the caches, else fetched (within `deadline`) and decoded.
    func statement(at url: String, deadline: Deadline) throws(FederationError) -> EntityStatement {
        let now = clock.now()
        switch lookup(url, now: now) {
        case .hit(let s): return s
        case .failed(let e): throw e
        case .miss: break
        }
        do {
            let statement = try EntityStatement.decode(try fetcher.get(url, deadline: deadline))
            // One already expired is not kept; validation rejects it anyway.
            if statement.expiresAt > now {
                statements.set(url, statement, cost: Self.cost(of: statement, url: url))
                store?.save(url: url, body: statement.compact, expiresAt: statement.expiresAt, fetchedAt: now)
            }
            return statement
        } catch {
            // A refused URL fails without any connection, and a fetch cut short by this resolve's
            // own budget says nothing about the host: neither is remembered.
            if case .invalidRequest = error {} else if !deadline.hasPassed {
                failures.set(url, Failure(error: error, until: now + Self.failureTTL), cost: 128 + url.utf8.count + error.message.utf8.count)
            }
            throw error
        }
    }

    /// Rough memory of a decoded statement: the compact JWT, its decoded payload and claims.
    static func cost(of s: EntityStatement, url: String) -> Int { s.compact.utf8.count * 3 + url.utf8.count + 512 }
}
