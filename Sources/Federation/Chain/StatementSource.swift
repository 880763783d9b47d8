import Support
import Foundation
import JSON
import Store

/// Where chain building gets statements: in-process for entities hosted here, over HTTP (with a
/// memory and SQLite cache that honours each statement's `exp`) for everything else.
struct StatementSource {
    let host: FederationHost

    func entityConfiguration(of entityID: String) throws(FederationError) -> EntityStatement {
        if host.entity(entityID) != nil {
            return try EntityStatement.decode(host.entityConfiguration(of: entityID))
        }
        return try remote(EntityURL.configuration(of: entityID))
    }

    /// The statement `superior` issues about `subject`, from the superior's advertised fetch endpoint.
    func subordinateStatement(superior: EntityStatement, subject: String) throws(FederationError) -> EntityStatement {
        if host.entity(superior.subject) != nil {
            return try EntityStatement.decode(host.subordinateStatement(issuer: superior.subject, subject: subject))
        }
        guard let endpoint = superior.metadata?["federation_entity"]?["federation_fetch_endpoint"]?.stringValue else {
            throw .invalidTrustChain("\(superior.subject) publishes no federation_fetch_endpoint")
        }
        return try remote(EntityURL.fetch(endpoint: endpoint, subject: subject))
    }

    private func remote(_ url: String) throws(FederationError) -> EntityStatement {
        let now = host.now()
        if let cached = host.remoteCache.get(url, now: now) { return cached }
        let body = try host.fetcher.get(url)
        let statement = try EntityStatement.decode(body)
        host.remoteCache.put(url, statement)
        return statement
    }
}

/// Remote statements by URL until their `exp`, in memory and in SQLite so a restart does not
/// refetch a whole federation.
final class RemoteStatementCache: @unchecked Sendable {
    private let lock = NSLock()
    private var memory: [String: EntityStatement] = [:]
    private let repository: StatementCacheRepository
    private let clock: Clock

    init(database: Database, clock: Clock) {
        repository = StatementCacheRepository(database: database)
        self.clock = clock
    }

    func get(_ url: String, now: Int64) -> EntityStatement? {
        if let s = lock.withLock({ memory[url] }), s.expiresAt > now { return s }
        guard let body = try? repository.get(url: url, now: now), let s = try? EntityStatement.decode(body) else { return nil }
        lock.withLock { memory[url] = s }
        return s
    }

    func put(_ url: String, _ statement: EntityStatement) {
        lock.withLock {
            if memory.count > 4096 { memory.removeAll(keepingCapacity: true) }
            memory[url] = statement
        }
        try? repository.put(url: url, body: statement.compact, expiresAt: statement.expiresAt, fetchedAt: clock.now())
    }
}

/// URLs of the federation documents of an entity.
enum EntityURL {
    static func configuration(of entityID: String) -> String {
        var base = entityID
        while base.hasSuffix("/") { base.removeLast() }
        return base + wellKnownFederationPath
    }

    static func fetch(endpoint: String, subject: String) -> String {
        endpoint + (endpoint.contains("?") ? "&" : "?") + "sub=" + percentEncode(subject)
    }

    static func percentEncode(_ s: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return s.addingPercentEncoding(withAllowedCharacters: allowed) ?? s
    }
}
