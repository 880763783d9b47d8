import JOSE

/// Collects candidate chains from a subject up to the requested Trust Anchors by following
/// `authority_hints` breadth-first (section 10.1), so the shortest chains come first. Every
/// hop is bounded (depth, hints per entity, statements fetched, the resolve's deadline) and
/// loops are cut.
struct TrustChainBuilder {
    let source: any StatementSource
    let limits: ChainLimits
    let now: Int64
    let deadline: Deadline

    /// A partial chain: statements from the subject's configuration up to the configuration of `top`.
    private struct Path {
        var statements: [SourcedStatement]   // subject EC, then subordinate statements
        var top: SourcedStatement            // configuration of the highest entity reached
        var visited: Set<String>
    }

    /// Candidate chains (unvalidated apart from per-hop signatures), shortest first.
    /// `anchors` are the acceptable Trust Anchor entity IDs.
    func candidates(subject: String, anchors: Set<String>) throws(FederationError) -> (chains: [[SourcedStatement]], problems: [String]) {
        var fetched = 0
        func count() throws(FederationError) {
            fetched += 1
            if fetched > limits.maxStatementsFetched { throw .invalidTrustChain("chain building fetched more than \(limits.maxStatementsFetched) statements") }
            if deadline.hasPassed { throw .temporarilyUnavailable("the resolve ran out of time") }
        }
        let leaf: SourcedStatement
        do {
            leaf = try source.entityConfiguration(of: subject, deadline: deadline)
        } catch {
            // A subject this server will not fetch from is the caller's request at fault (and no
            // connection was made); anything else means the subject could not be found.
            if case .invalidRequest = error { throw error }
            throw .invalidSubject("cannot obtain the entity configuration of \(subject): \(error.message)")
        }
        guard leaf.statement.isEntityConfiguration, leaf.statement.subject == subject else {
            throw .invalidSubject("the entity configuration of \(subject) names \(leaf.statement.issuer) → \(leaf.statement.subject)")
        }
        do {
            try leaf.verify(with: leaf.statement.jwks)
            try leaf.statement.checkTime(now: now, skew: limits.clockSkew)
        } catch {
            throw .invalidSubject(error.message)
        }
        if anchors.contains(subject) { return ([[leaf]], []) }

        var problems: [String] = []
        var chains: [[SourcedStatement]] = []
        var frontier = [Path(statements: [leaf], top: leaf, visited: [subject])]
        for _ in 0..<limits.maxDepth where !frontier.isEmpty {
            var next: [Path] = []
            for path in frontier {
                let top = path.top.statement
                let hints = top.authorityHints
                if hints.count > limits.maxAuthorityHints { problems.append("\(top.subject) lists more than \(limits.maxAuthorityHints) authority hints; extra ones ignored") }
                for hint in hints.prefix(limits.maxAuthorityHints) {
                    if path.visited.contains(hint) { problems.append("loop: \(hint) appears twice in authority_hints chain"); continue }
                    do throws(FederationError) {
                        try count()
                        let superior = try source.entityConfiguration(of: hint, deadline: deadline)
                        guard superior.statement.isEntityConfiguration, superior.statement.subject == hint else {
                            throw FederationError.invalidTrustChain("configuration of \(hint) names \(superior.statement.issuer) → \(superior.statement.subject)")
                        }
                        try superior.verify(with: superior.statement.jwks)
                        try superior.statement.checkTime(now: now, skew: limits.clockSkew)
                        try count()
                        let statement = try source.subordinateStatement(superior: superior, subject: top.subject, deadline: deadline)
                        guard statement.statement.issuer == hint, statement.statement.subject == top.subject else {
                            throw FederationError.invalidTrustChain("statement from \(hint) about \(top.subject) names \(statement.statement.issuer) → \(statement.statement.subject)")
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
