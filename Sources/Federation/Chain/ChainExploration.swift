import JOSE
import JSON

/// Every trust chain from a subject to one Trust Anchor, as the resolver builds and validates
/// them, with what each check found: for the explorer's chain page, where people learn and debug
/// chains. Built by the resolver's own `TrustChainBuilder` and `TrustChainValidator`, so the
/// chain marked `chosen` is the one `resolve` returns, and every verdict here is the resolver's.
public struct ChainExploration: Sendable {
    /// One statement of a candidate chain and the checks of section 10.2 on it.
    public struct Statement: Sendable {
        public let statement: EntityStatement
        /// The URL that serves it: the entity configuration's well-known URL, or the issuer's
        /// fetch endpoint with `sub`. Nil when the issuer publishes no fetch endpoint.
        public let endpoint: String?
        /// The signature verifies with the keys the chain vouches for (section 10.2), or why not.
        public let signature: Verdict
        /// `iat` not in the future, `exp` not passed (section 10.2 / 3).
        public let time: Verdict
    }

    public struct Verdict: Sendable {
        public let passed: Bool
        public let detail: String
    }

    public struct Candidate: Sendable {
        /// The subject's entity configuration, the Subordinate Statements upwards, the Trust
        /// Anchor's entity configuration.
        public let statements: [Statement]
        /// Per Subordinate Statement (the subject's superior's first): its constraints checked.
        public let constraints: [ConstraintVerdict]
        /// How the metadata policy resolved; nil for a chain of the anchor alone, or when the
        /// chain failed before policy (its constraints).
        public let policy: MetadataPolicyTrace?
        /// The validated chain, or why the validator refused it.
        public let chain: TrustChain?
        public let error: FederationError?
    }

    public struct TrustMarkVerdict: Sendable {
        public let entry: TrustMarkEntry
        public let included: Bool
        /// For a mark left out: the rule (1 to 5 of docs/federation.md) it fails.
        public let rule: Int?
        public let reason: String
    }

    public let subject: String
    public let trustAnchor: String
    /// True when the anchor is hosted here (its keys known); false: a remote anchor trusted with
    /// the keys of its own configuration.
    public let anchorKnown: Bool
    public let candidates: [Candidate]
    /// Hints that led nowhere, statements that could not be fetched or verified on the way up.
    public let problems: [String]
    /// Index in `candidates` of the chain `resolve` picks: the first valid one.
    public let chosen: Int?
    /// The subject's trust marks judged against the chosen chain's anchor.
    public let trustMarks: [TrustMarkVerdict]
}

extension FederationHost {
    /// Every chain from `subject` to `trustAnchor` (hosted here, or another server's anchor
    /// reached through the allow-list, then trusted as it publishes itself), validated as
    /// `resolve` validates them. Throws when there is nothing to show: a subject that cannot be
    /// obtained, a hosted entity that is not a Trust Anchor, or a source this server will not fetch.
    public func exploreChains(subject: String, trustAnchor: String) throws(FederationError) -> ChainExploration {
        let anchorKeys: TrustAnchorKeys
        if entities[trustAnchor] != nil {
            guard trustAnchorIDs.contains(trustAnchor) else {
                throw .invalidTrustAnchor("\(trustAnchor) is hosted here but is not a Trust Anchor")
            }
            anchorKeys = .known(try keys.publicKeys(for: trustAnchor))
        } else {
            anchorKeys = .selfPublished
        }
        let resolver = trustResolver()
        let deadline = Deadline.after(seconds: limits.resolveBudget)
        let now = now()
        let builder = TrustChainBuilder(source: resolver.source, limits: limits, now: now, deadline: deadline)
        let (chains, problems) = try builder.candidates(subject: subject, anchors: [trustAnchor])
        let validator = TrustChainValidator(now: now, skew: limits.clockSkew, policies: policyCache)

        var candidates: [ChainExploration.Candidate] = []
        for chain in chains {
            var valid: TrustChain?
            var failure: FederationError?
            do { valid = try validator.validate(chain, anchorKeys: anchorKeys) } catch { failure = error }
            candidates.append(explore(chain, anchorKeys: anchorKeys, source: resolver.source, now: now, deadline: deadline,
                                      valid: valid, failure: failure))
        }
        let chosen = candidates.firstIndex { $0.chain != nil }

        var marks: [ChainExploration.TrustMarkVerdict] = []
        if let chosen, let chain = candidates[chosen].chain {
            let anchors: [String: TrustAnchorKeys] = [trustAnchor: anchorKeys]
            let verification = verifiedTrustMarks(
                chain.subject.trustMarks, subject: subject, trustAnchor: chain.trustAnchor,
                issuer: { issuer throws(FederationError) -> TrustMarkIssuerTrust in
                    TrustMarkIssuerTrust(chain: try resolver.resolve(subject: issuer, anchors: anchors, deadline: deadline))
                },
                status: trustMarkStatusChecker, now: now)
            for m in verification.marks {
                marks.append(.init(entry: m.entry, included: true, rule: nil, reason: "passes all five rules; issued by \(m.issuer)"))
            }
            for r in verification.rejected {
                marks.append(.init(entry: r.entry, included: false, rule: r.rule, reason: r.reason))
            }
        }
        return ChainExploration(subject: subject, trustAnchor: trustAnchor, anchorKnown: anchorKeys.isKnown,
                                candidates: candidates, problems: problems, chosen: chosen, trustMarks: marks)
    }

    /// The per-statement checks, constraints and policy trace of one candidate. Signatures are
    /// checked with the keys the validator uses (section 10.2): each statement with the keys
    /// in the statement above it, the anchor's with the trusted keys.
    private func explore(_ chain: [SourcedStatement], anchorKeys: TrustAnchorKeys, source: any StatementSource, now: Int64,
                         deadline: Deadline, valid: TrustChain?, failure: FederationError?) -> ChainExploration.Candidate {
        let anchor = chain[chain.count - 1].statement
        let anchorTrusted: JWKSet
        switch anchorKeys {
        case .known(let k): anchorTrusted = k
        case .selfPublished: anchorTrusted = anchor.jwks
        }
        var views: [ChainExploration.Statement] = []
        for (i, sourced) in chain.enumerated() {
            let s = sourced.statement
            let keys: JWKSet, whose: String
            if i == chain.count - 1 {
                keys = anchorTrusted
                whose = anchorKeys.isKnown ? "the Trust Anchor's known keys" : "the keys of its own configuration (remote anchor)"
            } else if i + 1 == chain.count - 1 && i > 0 {
                keys = anchorTrusted
                whose = "the Trust Anchor's keys"
            } else {
                keys = chain[i + 1].statement.jwks
                whose = "the keys \(chain[i + 1].statement.issuer) states for \(chain[i + 1].statement.subject)"
            }
            let signature: ChainExploration.Verdict
            do {
                try sourced.verify(with: keys)
                signature = .init(passed: true, detail: "kid \(s.keyID) verifies with \(whose)")
            } catch {
                signature = .init(passed: false, detail: "kid \(s.keyID) does not verify with \(whose): \(error.message)")
            }
            let time: ChainExploration.Verdict
            do {
                try s.checkTime(now: now, skew: limits.clockSkew)
                time = .init(passed: true, detail: "current")
            } catch {
                time = .init(passed: false, detail: error.message)
            }
            let endpoint: String?
            if s.isEntityConfiguration {
                endpoint = EntityURL.configuration(of: s.subject)
            } else {
                endpoint = (try? source.entityConfiguration(of: s.issuer, deadline: deadline))
                    .flatMap { superior in try? EntityURL.fetch(superior: superior.statement, subject: s.subject) }
            }
            views.append(.init(statement: s, endpoint: endpoint, signature: signature, time: time))
        }

        guard chain.count > 1 else {
            return .init(statements: views, constraints: [], policy: nil, chain: valid, error: failure)
        }
        let leaf = chain[0].statement
        let subordinate = chain[1..<(chain.count - 1)].map(\.statement)
        let constrained = ChainConstraints.evaluate(leaf: leaf, subordinate: subordinate)
        var policy: MetadataPolicyTrace?
        if constrained.failure == nil {
            policy = MetadataPolicy.trace(
                leafMetadata: constrained.metadata, superiorMetadata: subordinate[0].metadata,
                policies: subordinate.reversed().compactMap { s in
                    s.metadataPolicy.map { (entityID: s.issuer, policy: $0, crit: s.metadataPolicyCrit) }
                })
        }
        return .init(statements: views, constraints: constrained.verdicts, policy: policy, chain: valid, error: failure)
    }
}

extension TrustAnchorKeys {
    var isKnown: Bool { if case .known = self { return true } else { return false } }
}
