import JOSE
import JSON
import Support

/// One finding of `trustbed check`.
public struct CheckFinding: Sendable, CustomStringConvertible {
    public let ok: Bool
    public let message: String
    public var description: String { (ok ? "ok      " : "PROBLEM ") + message }
}

/// Examines a live entity the way a relying party would, collecting every problem instead of
/// stopping at the first: its configuration, and for each authority hint the superior's
/// configuration and statement about it. Needs only a statement source.
public struct EntityChecker: Sendable {
    let source: any StatementSource
    let clock: Clock
    let limits: ChainLimits

    public init(source: some StatementSource, clock: Clock, limits: ChainLimits = ChainLimits()) {
        self.source = source
        self.clock = clock
        self.limits = limits
    }

    public func check(entityID: String) -> [CheckFinding] {
        var findings: [CheckFinding] = []
        func ok(_ m: String) { findings.append(CheckFinding(ok: true, message: m)) }
        func problem(_ m: String) { findings.append(CheckFinding(ok: false, message: m)) }
        let now = clock.now()
        let deadline = Deadline.after(seconds: limits.resolveBudget)

        let ec: EntityStatement
        do { ec = try source.entityConfiguration(of: entityID, deadline: deadline).statement } catch {
            problem("entity configuration of \(entityID): \(error.message)")
            return findings
        }
        ok("entity configuration decodes (typ \(FederationType.entityStatement), kid \(ec.keyID))")
        if ec.issuer == entityID && ec.subject == entityID { ok("iss and sub are the entity ID") } else { problem("iss/sub are \(ec.issuer)/\(ec.subject), expected \(entityID)") }
        do { try ec.verify(with: ec.jwks); ok("self-signature verifies with its jwks") } catch { problem(error.message) }
        do { try ec.checkTime(now: now, skew: limits.clockSkew); ok("valid now (expires in \(ec.expiresAt - now) s)") } catch { problem(error.message) }
        if ec.metadata == nil { problem("no metadata") }
        let fed = ec.metadata?["federation_entity"]?.objectValue ?? [:]
        for (name, value) in fed.sorted(by: { $0.key < $1.key }) where name.hasSuffix("_endpoint") {
            if let url = value.stringValue, url.hasPrefix("https://") || url.hasPrefix("http://") { ok("\(name) is \(url)") } else { problem("\(name) is not an absolute URL") }
        }
        if ec.authorityHints.isEmpty { ok("no authority_hints: a trust anchor or a standalone entity") }
        for hint in ec.authorityHints {
            do {
                let sourced = try source.entityConfiguration(of: hint, deadline: deadline)
                let superior = sourced.statement
                try superior.verify(with: superior.jwks)
                try superior.checkTime(now: now, skew: limits.clockSkew)
                ok("superior \(hint) configuration verifies")
                let statement = try source.subordinateStatement(superior: sourced, subject: entityID, deadline: deadline).statement
                try statement.verify(with: superior.jwks)
                try statement.checkTime(now: now, skew: limits.clockSkew)
                guard statement.issuer == hint, statement.subject == entityID else {
                    problem("statement from \(hint) names \(statement.issuer) → \(statement.subject)")
                    continue
                }
                ok("\(hint) issues a valid subordinate statement about it")
                do { try ec.verify(with: statement.jwks); ok("its configuration verifies with the keys \(hint) vouches for") } catch {
                    problem("its configuration is not signed by a key \(hint) vouches for (stale keys at the superior?)")
                }
            } catch {
                problem("via \(hint): \(error.message)")
            }
        }
        return findings
    }
}

extension FederationHost {
    /// `EntityChecker` over this host's statements and remote ones.
    public func check(entityID: String) -> [CheckFinding] {
        EntityChecker(source: HostStatementSource(host: self, networkDemand: nil), clock: clock, limits: limits).check(entityID: entityID)
    }
}

/// A key provider for a process that hosts nothing (the CLI's client commands).
public struct NoKeys: KeyProvider {
    public init() {}
    public func signingKey(for entityID: String) throws(FederationError) -> SigningKey { throw .serverError("no keys in client mode") }
    public func publicKeys(for entityID: String) throws(FederationError) -> JWKSet { throw .serverError("no keys in client mode") }
    public func historicalKeys(for entityID: String) throws(FederationError) -> [JWK] { [] }
}
