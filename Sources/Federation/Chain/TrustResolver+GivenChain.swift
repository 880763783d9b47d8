import JOSE
import Support

extension TrustResolver {
    /// A trust chain handed over by its subject (OpenID Federation 1.0 §4.3: the `trust_chain`
    /// JWS header of a request object, §12.1.1), validated as §10.2 says. The Trust Anchor's
    /// own configuration is always fetched from the anchor, never taken from the chain: the
    /// chain's sender could otherwise name any keys as the anchor's. With `.selfPublished` the
    /// fetched configuration's keys are trusted, as `resolve` does.
    public func validate(given compact: [String], subject: String, trustAnchor: String,
                         anchorKeys: TrustAnchorKeys = .selfPublished) throws(FederationError) -> TrustChain {
        guard !compact.isEmpty else { throw .invalidTrustChain("the trust_chain is empty") }
        var chain = try compact.map { (text: String) throws(FederationError) -> SourcedStatement in
            SourcedStatement(try EntityStatement.decode(text))
        }
        guard chain[0].statement.isEntityConfiguration, chain[0].statement.subject == subject else {
            throw .invalidTrustChain("the trust_chain does not start with the entity configuration of \(subject)")
        }
        let anchor = try source.entityConfiguration(of: trustAnchor, deadline: .after(seconds: limits.resolveBudget))
        let keys: JWKSet
        switch anchorKeys {
        case .known(let known): keys = known
        case .selfPublished: keys = anchor.statement.jwks
        }
        // The chain may end with the anchor's configuration or with its statement about the
        // entity below it (§4.3); either way the anchor's configuration used is the one fetched.
        if let last = chain.last?.statement, last.isEntityConfiguration, chain.count > 1 {
            guard last.subject == trustAnchor else {
                throw .invalidTrustChain("the trust_chain ends at \(last.subject), not at the Trust Anchor \(trustAnchor)")
            }
            chain.removeLast()
        }
        let validator = TrustChainValidator(now: clock.now(), skew: limits.clockSkew, policies: policies)
        if subject == trustAnchor { return try validator.validate([anchor], anchorKeys: .known(keys)) }
        guard chain.count >= 2 else { throw .invalidTrustChain("the trust_chain holds no subordinate statement about \(subject)") }
        guard chain.last?.statement.issuer == trustAnchor else {
            throw .invalidTrustChain("the trust_chain's last statement is issued by \(chain.last?.statement.issuer ?? "?"), not by the Trust Anchor \(trustAnchor)")
        }
        chain.append(anchor)
        return try validator.validate(chain, anchorKeys: .known(keys))
    }
}
