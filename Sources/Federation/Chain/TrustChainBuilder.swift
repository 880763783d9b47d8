import JOSE

/// Collects candidate chains from a subject up to the requested Trust Anchors by following
/// `authority_hints` breadth-first (section 10.1), so the shortest chains come first. Every
/// hop is bounded (depth, hints per entity, statements fetched) and loops are cut.
struct TrustChainBuilder {
    let source: StatementSource
    let limits: ChainLimits
    let now: Int64

    /// A partial chain: statements from the subject's configuration up to the configuration of `top`.
    private struct Path {
        var statements: [EntityStatement]   // subject EC, then subordinate statements
        var top: EntityStatement            // configuration of the highest entity reached
        var visited: Set<String>
    }

    /// Candidate chains (unvalidated apart from per-hop signatures), shortest first.
    /// `anchors` are the acceptable Trust Anchor entity IDs.
    func candidates(subject: String, anchors: Set<String>) throws(FederationError) -> (chains: [[EntityStatement]], problems: [String]) {
        var fetched = 0
        func count() throws(FederationError) {
            fetched += 1
            if fetched > limits.maxStatementsFetched { throw .invalidTrustChain("chain building fetched more than \(limits.maxStatementsFetched) statements") }
        }
        let leaf: EntityStatement
        do {
            leaf = try source.entityConfiguration(of: subject)
        } catch {
            throw .invalidSubject("cannot obtain the entity configuration of \(subject): \(error.message)")
        }
        guard leaf.isEntityConfiguration, leaf.subject == subject else {
            throw .invalidSubject("the entity configuration of \(subject) names \(leaf.issuer) → \(leaf.subject)")
        }
        do {
            try leaf.verify(with: leaf.jwks)
            try leaf.checkTime(now: now, skew: limits.clockSkew)
        } catch {
            throw .invalidSubject(error.message)
        }
        if anchors.contains(subject) { return ([[leaf]], []) }

        var problems: [String] = []
        var chains: [[EntityStatement]] = []
        var frontier = [Path(statements: [leaf], top: leaf, visited: [subject])]
        for _ in 0..<limits.maxDepth where !frontier.isEmpty {
            var next: [Path] = []
            for path in frontier {
                let hints = path.top.authorityHints
                if hints.count > limits.maxAuthorityHints { problems.append("\(path.top.subject) lists more than \(limits.maxAuthorityHints) authority hints; extra ones ignored") }
                for hint in hints.prefix(limits.maxAuthorityHints) {
                    if path.visited.contains(hint) { problems.append("loop: \(hint) appears twice in authority_hints chain"); continue }
                    do throws(FederationError) {
                        try count()
                        let superior = try source.entityConfiguration(of: hint)
                        guard superior.isEntityConfiguration, superior.subject == hint else {
                            throw FederationError.invalidTrustChain("configuration of \(hint) names \(superior.issuer) → \(superior.subject)")
                        }
                        try superior.verify(with: superior.jwks)
                        try superior.checkTime(now: now, skew: limits.clockSkew)
                        try count()
                        let statement = try source.subordinateStatement(superior: superior, subject: path.top.subject)
                        guard statement.issuer == hint, statement.subject == path.top.subject else {
                            throw FederationError.invalidTrustChain("statement from \(hint) about \(path.top.subject) names \(statement.issuer) → \(statement.subject)")
                        }
                        var extended = path
                        extended.statements.append(statement)
                        extended.top = superior
                        extended.visited.insert(hint)
                        if anchors.contains(hint) {
                            chains.append(extended.statements + [superior])
                        } else {
                            next.append(extended)
                        }
                    } catch {
                        problems.append(error.message)
                    }
                }
            }
            frontier = next
        }
        return (chains, problems)
    }
}
