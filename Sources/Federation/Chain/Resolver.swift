import JOSE
import JSON
import Support

extension FederationHost {
    /// A resolver over this host's statements (served in-process) and remote ones (fetched).
    /// With `networkDemand`, it never fetches: it records that it would have had to.
    func trustResolver(networkDemand: NetworkDemand? = nil) -> TrustResolver {
        TrustResolver(source: HostStatementSource(host: self, networkDemand: networkDemand), limits: limits, clock: clock, policies: policyCache)
    }

    /// Builds and validates chains from `subject` to any of `anchors`, returning the first (shortest)
    /// valid one.
    public func resolveChain(subject: String, anchors: [String: TrustAnchorKeys], deadline: Deadline? = nil) throws(FederationError) -> TrustChain {
        try trustResolver().resolve(subject: subject, anchors: anchors, deadline: deadline)
    }

    /// Trust Anchors a resolver hosted here accepts: the anchors hosted here (with their keys), and
    /// remote anchors its own `authority_hints` lead to (trusted as they publish themselves).
    func acceptedAnchors(for resolverID: String) throws(FederationError) -> [String: TrustAnchorKeys] {
        var out: [String: TrustAnchorKeys] = [:]
        for id in trustAnchorIDs {
            out[id] = .known(try keys.publicKeys(for: id))
        }
        var pending = [resolverID]
        var seen: Set<String> = []
        while let id = pending.popLast(), seen.insert(id).inserted, seen.count < 64 {
            guard let e = entities[id] else { if out[id] == nil { out[id] = .selfPublished }; continue }
            pending += e.authorityHints
        }
        return out
    }

    /// The signed resolve response (section 8.3) of a resolver hosted here.
    public func resolveResponse(resolver resolverID: String, subject: String, trustAnchors: [String], entityTypes: [String]) throws(FederationError) -> String {
        try signedResolveResponse(resolver: resolverID, subject: subject, trustAnchors: trustAnchors, entityTypes: entityTypes).compact
    }

    /// The resolve response if it can be answered without any network access (everything in the
    /// chain is hosted here or cached, or known to have failed lately), else nil: then call
    /// `resolveResponse`/`signedResolveResponse` on a thread that may wait for other hosts.
    public func localResolveResponse(resolver resolverID: String, subject: String, trustAnchors: [String], entityTypes: [String]) throws(FederationError) -> String? {
        try localSignedResolveResponse(resolver: resolverID, subject: subject, trustAnchors: trustAnchors, entityTypes: entityTypes)?.compact
    }

    func signedResolveResponse(resolver resolverID: String, subject: String, trustAnchors: [String], entityTypes: [String]) throws(FederationError) -> SignedJWT {
        try signedResolveResponse(resolver: resolverID, subject: subject, trustAnchors: trustAnchors, entityTypes: entityTypes, networkDemand: nil)
    }

    func localSignedResolveResponse(resolver resolverID: String, subject: String, trustAnchors: [String], entityTypes: [String]) throws(FederationError) -> SignedJWT? {
        let demand = NetworkDemand()
        do {
            return try signedResolveResponse(resolver: resolverID, subject: subject, trustAnchors: trustAnchors, entityTypes: entityTypes, networkDemand: demand)
        } catch {
            if demand.wanted { return nil }
            throw error
        }
    }

    private func signedResolveResponse(resolver resolverID: String, subject: String, trustAnchors: [String], entityTypes: [String],
                                       networkDemand: NetworkDemand?) throws(FederationError) -> SignedJWT {
        let now = now()
        let key = StatementKey.resolve(resolver: resolverID, subject: subject, trustAnchors: trustAnchors.sorted(), entityTypes: entityTypes.sorted())
        // Everything is checked inside the cached build: a cached answer was built after the
        // checks passed, and the host (so the set of accepted anchors) never changes under a cache.
        return try cache.value(for: key, now: now, type: FederationType.resolveResponse) { () throws(FederationError) -> (String, Int64) in
            guard let resolver = entities[resolverID], isSuperior(resolverID) else { throw .notFound("no resolver \(resolverID) here") }
            let accepted = try acceptedAnchors(for: resolverID)
            var anchors: [String: TrustAnchorKeys] = [:]
            for ta in trustAnchors {
                if let keys = accepted[ta] { anchors[ta] = keys }
            }
            guard !anchors.isEmpty else { throw .invalidTrustAnchor("\(trustAnchors.joined(separator: ", ")) is not a trust anchor this resolver knows") }
            // One budget for the subject's chain and the chains of its trust mark issuers.
            let deadline = Deadline.after(seconds: limits.resolveBudget)
            let chainResolver = trustResolver(networkDemand: networkDemand)
            let chain = try chainResolver.resolve(subject: subject, anchors: anchors, deadline: deadline)
            var metadata = chain.resolvedMetadata
            if !entityTypes.isEmpty { metadata = metadata.filter { entityTypes.contains($0.key) } }
            var remoteIssuer = false
            let verification = verifiedTrustMarks(
                chain.subject.trustMarks, subject: subject, trustAnchor: chain.trustAnchor,
                issuer: { issuer throws(FederationError) -> TrustMarkIssuerTrust in
                    if entities[issuer] == nil {
                        remoteIssuer = true
                        // Its status endpoint would be asked over the network.
                        if let networkDemand {
                            networkDemand.record()
                            throw .temporarilyUnavailable("trust mark issuer \(issuer) is remote; answering needs the network")
                        }
                    }
                    let issuerChain = try chainResolver.resolve(subject: issuer, anchors: anchors, deadline: deadline)
                    return TrustMarkIssuerTrust(
                        keys: issuerChain.subject.jwks,
                        statusEndpoint: issuerChain.subject.metadata?["federation_entity"]?[FederationEndpoint.trustMarkStatus.metadataParameter]?.stringValue,
                        trustAnchor: issuerChain.trustAnchor.subject)
                },
                status: trustMarkStatusChecker, now: now)
            let marks = verification.marks
            // Whatever succeeded without the network may differ from the full answer (a remote
            // hint might give a shorter chain): nothing is signed or cached then.
            if networkDemand?.wanted == true { throw .temporarilyUnavailable("the answer needs the network") }
            var exp = min(chain.expiresAt, now + resolver.lifetime)
            for m in marks { if let e = m.expiresAt { exp = min(exp, e) } }
            var claims: [String: JSONValue] = [
                "iss": .string(resolverID),
                "sub": .string(subject),
                "iat": .int(now),
                "exp": .int(exp),
                "metadata": .object(metadata),
                "trust_chain": JSONValue(chain.compactStatements),
            ]
            if !marks.isEmpty { claims["trust_marks"] = .array(marks.map(\.entry.jsonValue)) }
            let jwt = try keys.signingKey(for: resolverID).sign(claims, type: FederationType.resolveResponse)
            // A mark from another server can be revoked there at any moment: such an answer is
            // served for one second at most.
            let refresh = remoteIssuer || verification.dependsOnRemoteStatus
                ? now + TrustMarkStatusChecker.cacheLifetime : SignedStatementCache.refreshTime(iat: now, exp: exp)
            return (jwt, refresh)
        }
    }
}
