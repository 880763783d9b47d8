import JOSE
import JSON
import Support

/// What the federation explorer (issue 19) reads beyond the endpoints' answers: statements as
/// the resolver gets them (hosted here from the signed-statement cache, anything else fetched
/// under the fetch allow-list, size limit and time budget), and the live status of a trust mark
/// by the same rules the resolve endpoint publishes marks by. Read-only: nothing here signs a
/// statement the endpoints would not sign anyway.
extension FederationHost {
    /// The bounds every resolve keeps; an explorer page fetching from other hosts keeps them too.
    public var chainLimits: ChainLimits { limits }

    /// The entity configuration of `entityID` exactly as a resolve here would use it.
    public func sourcedEntityConfiguration(of entityID: String, deadline: Deadline) throws(FederationError) -> EntityStatement {
        try HostStatementSource(host: self, networkDemand: nil).entityConfiguration(of: entityID, deadline: deadline).statement
    }

    /// The subordinate statement `superior` (an entity configuration) issues about `subject`,
    /// from its advertised fetch endpoint (section 8.1.1), or from the cache for one hosted here.
    public func sourcedSubordinateStatement(superior: EntityStatement, subject: String, deadline: Deadline) throws(FederationError) -> EntityStatement {
        try HostStatementSource(host: self, networkDemand: nil)
            .subordinateStatement(superior: SourcedStatement(superior), subject: subject, deadline: deadline).statement
    }

    /// Trust marks hosted issuers declare for `subject` that its configuration no longer
    /// carries because they are revoked (`trustbed trust-mark revoke`): the configuration drops
    /// a revoked mark, so only the declaration and the revocation record show it existed.
    public func revokedTrustMarks(for subject: String) -> [(issuer: String, type: String, reason: String, revokedAt: Int64)] {
        var out: [(issuer: String, type: String, reason: String, revokedAt: Int64)] = []
        for (issuer, issuance) in issuancesBySubject[subject] ?? [] {
            if let r = try? trustMarkRepository.revocation(issuer: issuer, trustMarkType: issuance.trustMarkType, subject: subject) {
                out.append((issuer, issuance.trustMarkType, r.reason, r.revokedAt))
            }
        }
        return out
    }

    /// The live status (section 8.4.2's values) of a trust mark `subject` carries, judged as the
    /// resolve endpoint judges it (`TrustMarkVerifier`'s five rules) against the first Trust
    /// Anchor hosted here that `subject` has a valid chain to: `invalid` when a rule fails (with
    /// the rule that failed), `expired`, `revoked` per the issuer (its records when hosted here,
    /// its status endpoint through the host's `TrustMarkStatusChecker` otherwise), else `active`.
    public func liveTrustMarkStatus(_ entry: TrustMarkEntry, subject: String, deadline: Deadline) -> TrustMarkLiveStatus {
        let now = now()
        guard let claims = try? JWS.parseClaims(entry.trustMark).claims else { return .init(.invalid, "not a signed JWT") }
        if let exp = claims["exp"]?.intValue, exp <= now { return .init(.expired, "exp has passed") }
        var anchors: [String: TrustAnchorKeys] = [:]
        for id in trustAnchorIDs {
            if let k = try? keys.publicKeys(for: id) { anchors[id] = .known(k) }
        }
        let resolver = trustResolver()
        let chain: TrustChain
        do { chain = try resolver.resolve(subject: subject, anchors: anchors, deadline: deadline) } catch {
            return .init(.invalid, "no valid trust chain from \(subject) to a Trust Anchor hosted here, so no issuer can be trusted: \(error.message)")
        }
        let anchorOnly = [chain.trustAnchor.subject: anchors[chain.trustAnchor.subject] ?? .selfPublished]
        let verifier = TrustMarkVerifier(trustAnchor: chain.trustAnchor, now: now, skew: limits.clockSkew)
        let mark: VerifiedTrustMark
        let trust: TrustMarkIssuerTrust
        do {
            (mark, trust) = try verifier.verify(entry, subject: subject) { issuer throws(FederationError) in
                TrustMarkIssuerTrust(chain: try resolver.resolve(subject: issuer, anchors: anchorOnly, deadline: deadline))
            }
        } catch {
            if case .expired = error { return .init(.expired, "\(error)") }
            return .init(.invalid, "\(error)")
        }
        if entities[mark.issuer] != nil {
            do {
                let status = try evaluateTrustMark(entry.trustMark, issuer: mark.issuer)
                return .init(status, status == .revoked ? "revoked by \(mark.issuer)" : "per \(mark.issuer)'s records")
            } catch {
                return .init(.invalid, error.message)
            }
        }
        guard let endpoint = trust.statusEndpoint else { return .init(.active, "valid; \(mark.issuer) publishes no status endpoint") }
        do {
            try trustMarkStatusChecker.checkActive(entry.trustMark, issuer: mark.issuer, endpoint: endpoint, keys: trust.keys, now: now,
                                                   via: isOwnOrigin(endpoint) ? OwnOriginStatusClient(host: self) : nil)
            return .init(.active, "per \(endpoint)")
        } catch {
            // The checker says why a mark is not active in words; its issuer's own answer ends
            // in "reports it <status>" (TrustMarkStatusChecker.ask).
            let reason = "\(error)"
            for status in [TrustMarkStatus.revoked, .expired] where reason.hasSuffix("reports it \(status.rawValue)") {
                return .init(status, reason)
            }
            return .init(.invalid, reason)
        }
    }
}

/// A trust mark's status as the explorer shows it, and why.
public struct TrustMarkLiveStatus: Sendable, Equatable {
    public let status: TrustMarkStatus
    public let reason: String

    public init(_ status: TrustMarkStatus, _ reason: String) {
        self.status = status
        self.reason = reason
    }
}
