import JOSE
import Store
import Support

/// The host's statement source: statements of entities hosted here come from the signed
/// statement cache (already parsed, and trusted because this process signed them); everything
/// else from the host's `RemoteStatementSource`. With a `NetworkDemand` it runs local-only: an
/// uncached remote statement is not fetched, the demand is recorded and the lookup fails, so
/// the caller can hand the resolve to a thread that may wait for other hosts.
struct HostStatementSource: StatementSource {
    let host: FederationHost
    let networkDemand: NetworkDemand?

    func entityConfiguration(of entityID: String, deadline: Deadline) throws(FederationError) -> SourcedStatement {
        if host.entity(entityID) != nil {
            let signed = try host.signedEntityConfiguration(of: entityID, parsed: true)
            return try Self.signedHere(signed) { s in s.jwks }
        }
        return try remote(EntityURL.configuration(of: entityID), deadline: deadline)
    }

    func subordinateStatement(superior: SourcedStatement, subject: String, deadline: Deadline) throws(FederationError) -> SourcedStatement {
        let superiorID = superior.statement.subject
        if host.entity(superiorID) != nil {
            let signed = try host.signedSubordinateStatement(issuer: superiorID, subject: subject, parsed: true)
            // Signed with the superior's key, which its own (local, trusted) configuration publishes.
            return try Self.signedHere(signed) { _ in superior.isTrusted ? superior.statement.jwks : nil }
        }
        return try remote(try EntityURL.fetch(superior: superior.statement, subject: subject), deadline: deadline)
    }

    private func remote(_ url: String, deadline: Deadline) throws(FederationError) -> SourcedStatement {
        if host.isOwnOrigin(url) { return try host.ownStatement(at: url) }
        guard let networkDemand else { return SourcedStatement(try host.remote.statement(at: url, deadline: deadline)) }
        switch host.remote.lookup(url, now: host.now()) {
        case .hit(let s): return SourcedStatement(s)
        case .failed(let e): throw e
        case .miss:
            networkDemand.record()
            throw .temporarilyUnavailable("\(url) is not cached; answering needs the network")
        }
    }

    /// `signerKeys`: the keys that include the one it was signed with, or nil when unknown (then
    /// the statement is treated like any other and its signature is checked).
    private static func signedHere(_ signed: SignedJWT, signerKeys: (EntityStatement) -> JWKSet?) throws(FederationError) -> SourcedStatement {
        guard let statement = signed.statement else { return SourcedStatement(try EntityStatement.decode(signed.compact)) }
        let signer = signerKeys(statement)?.key(withID: statement.keyID)
        return SourcedStatement(signedHere: statement, signer: signer)
    }
}

/// Set by a local-only resolve that would have needed the network.
final class NetworkDemand: Sendable {
    private let flag = Locked(false)
    func record() { flag.withLock { $0 = true } }
    var wanted: Bool { flag.current }
}

/// The SQLite cache of remote statements, for `RemoteStatementSource`. Failures to read or write
/// only cost a refetch, so they are not errors.
public struct SQLiteStatementStore: RemoteStatementStore {
    private let repository: StatementCacheRepository

    public init(database: Database) { repository = StatementCacheRepository(database: database) }

    public func statement(url: String, now: Int64) -> String? { try? repository.get(url: url, now: now) }

    public func save(url: String, body: String, expiresAt: Int64, fetchedAt: Int64) {
        try? repository.put(url: url, body: body, expiresAt: expiresAt, fetchedAt: fetchedAt)
    }
}
