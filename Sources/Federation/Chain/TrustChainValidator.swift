import JOSE
import JSON

/// Validates one candidate chain end to end (section 10.2) and resolves the subject's metadata.
/// Statements signed by this server skip the signature check when the key they were signed
/// with is the one the chain vouches for (see `SourcedStatement.verify(with:)`).
struct TrustChainValidator {
    let now: Int64
    let skew: Int64
    let policies: MetadataPolicyCache

    /// `chain`: subject EC, subordinate statements upwards, Trust Anchor EC.
    func validate(_ chain: [SourcedStatement], anchorKeys: TrustAnchorKeys) throws(FederationError) -> TrustChain {
        guard let leafSource = chain.first, let anchorSource = chain.last else { throw .invalidTrustChain("empty chain") }
        let statements = chain.map(\.statement)
        let leaf = leafSource.statement, anchor = anchorSource.statement
        for s in statements { try s.checkTime(now: now, skew: skew) }

        // The anchor's configuration must be signed by keys the caller trusts, and publish them.
        let anchorTrusted: JWKSet
        switch anchorKeys {
        case .known(let keys): anchorTrusted = keys
        case .selfPublished: anchorTrusted = anchor.jwks
        }
        guard anchor.isEntityConfiguration else { throw .invalidTrustChain("the chain does not end in an entity configuration") }
        do { try anchorSource.verify(with: anchorTrusted) } catch {
            throw .invalidTrustAnchor("the configuration of \(anchor.subject) is not signed by the trust anchor's known keys")
        }

        if statements.count == 1 {
            return TrustChain(statements: statements, resolvedMetadata: leaf.metadata ?? [:], expiresAt: leaf.expiresAt)
        }
        guard leaf.isEntityConfiguration else { throw .invalidTrustChain("the chain does not start with an entity configuration") }

        // Linkage and signatures (section 10.2, steps 3-7): statement j is about the issuer of
        // statement j-1 and is verified with keys from statement j+1.
        let subordinate = Array(chain[1..<(chain.count - 1)])
        try leafSource.verify(with: subordinate[0].statement.jwks)
        for (j, source) in subordinate.enumerated() {
            let s = source.statement
            let below = j == 0 ? leaf : subordinate[j - 1].statement
            guard s.subject == below.issuer else { throw .invalidTrustChain("statement \(s.issuer) → \(s.subject) does not name \(below.issuer)") }
            let above = j + 1 < subordinate.count ? subordinate[j + 1].statement : anchor
            guard s.issuer == above.subject else { throw .invalidTrustChain("statement \(s.issuer) → \(s.subject) is not about an entity below \(above.subject)") }
            // An intermediate's own configuration is not in the chain: its keys as its superior
            // vouches for them (`above.jwks`) verify what it signed.
            try source.verify(with: j + 1 < subordinate.count ? above.jwks : anchorTrusted)
        }

        // Constraints (section 6.2): each superior's statement limits everything below it, and
        // `allowed_entity_types` filters the subject's metadata before any policy.
        let constrained = ChainConstraints.evaluate(leaf: leaf, subordinate: subordinate.map(\.statement))
        if let failure = constrained.failure { throw .invalidTrustChain(failure) }
        let metadata = constrained.metadata

        // Metadata (section 6.1): the immediate superior's `metadata`, then the merged policies
        // from the Trust Anchor down.
        let chainPolicies = subordinate.reversed().compactMap { source -> (policy: [String: JSONValue], crit: [String])? in
            source.statement.metadataPolicy.map { ($0, source.statement.metadataPolicyCrit) }
        }
        let resolved: [String: JSONValue]
        do {
            resolved = try MetadataPolicyCache.apply(try policies.merged(chainPolicies), leafMetadata: metadata,
                                                     superiorMetadata: subordinate[0].statement.metadata)
        } catch {
            throw .invalidMetadata(error.message)
        }
        let exp = statements.map(\.expiresAt).min() ?? leaf.expiresAt
        return TrustChain(statements: statements, resolvedMetadata: resolved, expiresAt: exp)
    }
}
