import Support

/// Builds and validates trust chains from any `StatementSource`; needs no keys and no database,
/// so the same code serves the hosted resolve endpoint and the CLI client (`trustbed resolve`).
public struct TrustResolver: Sendable {
    let source: any StatementSource
    let limits: ChainLimits
    let clock: Clock
    let policies: MetadataPolicyCache

    /// `policies` is shared by resolvers that should reuse parsed and merged policies.
    public init(source: some StatementSource, limits: ChainLimits = ChainLimits(), clock: Clock,
                policies: MetadataPolicyCache = MetadataPolicyCache()) {
        self.source = source
        self.limits = limits
        self.clock = clock
        self.policies = policies
    }

    /// The first (shortest) valid chain from `subject` to any of `anchors`. `deadline` bounds
    /// the whole resolve (default: `limits.resolveBudget` from now); running out of it is
    /// `temporarily_unavailable`.
    public func resolve(subject: String, anchors: [String: TrustAnchorKeys], deadline: Deadline? = nil) throws(FederationError) -> TrustChain {
        let deadline = deadline ?? .after(seconds: limits.resolveBudget)
        let now = clock.now()
        do {
            return try resolve(subject: subject, anchors: anchors, now: now, deadline: deadline)
        } catch {
            if deadline.hasPassed, error.code != "temporarily_unavailable" {
                throw .temporarilyUnavailable("resolving \(subject) took longer than its time budget: \(error.message)")
            }
            throw error
        }
    }

    private func resolve(subject: String, anchors: [String: TrustAnchorKeys], now: Int64, deadline: Deadline) throws(FederationError) -> TrustChain {
        let builder = TrustChainBuilder(source: source, limits: limits, now: now, deadline: deadline)
        let (candidates, problems) = try builder.candidates(subject: subject, anchors: Set(anchors.keys))
        let validator = TrustChainValidator(now: now, skew: limits.clockSkew, policies: policies)
        var errors = problems
        for chain in candidates {
            guard let anchorID = chain.last?.statement.subject, let keys = anchors[anchorID] else { continue }
            do {
                return try validator.validate(chain, anchorKeys: keys)
            } catch {
                // A metadata policy conflict is reported as such rather than as a generic chain failure.
                if case .invalidMetadata = error, candidates.count == 1 { throw error }
                errors.append(error.message)
            }
        }
        let detail = errors.isEmpty ? "no authority_hints lead there" : errors.joined(separator: "; ")
        throw .invalidTrustChain("no valid trust chain from \(subject) to \(anchors.keys.sorted().joined(separator: ", ")): \(detail)")
    }
}
