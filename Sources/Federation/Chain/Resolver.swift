import JOSE
import JSON

extension FederationHost {
    /// Builds and validates chains from `subject` to any of `anchors`, returning the first (shortest)
    /// valid one. Usable with a host that hosts nothing, as a pure client (`trustbed resolve`).
    public func resolveChain(subject: String, anchors: [String: TrustAnchorKeys]) throws(FederationError) -> TrustChain {
        let now = now()
        let builder = TrustChainBuilder(source: StatementSource(host: self), limits: limits, now: now)
        let (candidates, problems) = try builder.candidates(subject: subject, anchors: Set(anchors.keys))
        var errors = problems
        for chain in candidates {
            guard let anchorID = chain.last?.subject, let keys = anchors[anchorID] else { continue }
            do {
                return try TrustChainValidator(now: now, skew: limits.clockSkew).validate(chain, anchorKeys: keys)
            } catch {
                // A metadata policy conflict is reported as such rather than as a generic chain failure.
                if case .invalidMetadata = error, candidates.count == 1 { throw error }
                errors.append(error.message)
            }
        }
        let detail = errors.isEmpty ? "no authority_hints lead there" : errors.joined(separator: "; ")
        throw .invalidTrustChain("no valid trust chain from \(subject) to \(anchors.keys.sorted().joined(separator: ", ")): \(detail)")
    }

    /// Trust Anchors a resolver hosted here accepts: the anchors hosted here (with their keys), and
    /// remote anchors its own `authority_hints` lead to (trusted as they publish themselves).
    func acceptedAnchors(for resolverID: String) throws(FederationError) -> [String: TrustAnchorKeys] {
        var out: [String: TrustAnchorKeys] = [:]
        for e in entities.values where e.isTrustAnchor {
            out[e.entityID] = .known(try keys.publicKeys(for: e.entityID))
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

    func signedResolveResponse(resolver resolverID: String, subject: String, trustAnchors: [String], entityTypes: [String]) throws(FederationError) -> SignedJWT {
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
            let chain = try resolveChain(subject: subject, anchors: anchors)
            var metadata = chain.resolvedMetadata
            if !entityTypes.isEmpty { metadata = metadata.filter { entityTypes.contains($0.key) } }
            let marks = verifiedTrustMarks(chain.subject.trustMarks, subject: subject, trustAnchor: chain.trustAnchor,
                                           issuerKeys: { issuer throws(FederationError) in try trustMarkIssuerKeys(issuer, anchors: anchors) },
                                           now: now)
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
            return (jwt, SignedStatementCache.refreshTime(iat: now, exp: exp))
        }
    }

    /// Keys of a trust mark issuer: a chain from the issuer to the same anchors must validate,
    /// and its configuration's keys sign the mark.
    func trustMarkIssuerKeys(_ issuer: String, anchors: [String: TrustAnchorKeys]) throws(FederationError) -> JWKSet {
        try resolveChain(subject: issuer, anchors: anchors).subject.jwks
    }
}
