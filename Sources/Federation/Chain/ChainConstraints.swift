import JSON

/// One Subordinate Statement's `constraints` checked against the part of the chain below its
/// issuer (section 6.2), for the validator and, check by check, for the explorer.
public struct ConstraintVerdict: Sendable {
    public struct Check: Sendable {
        /// `max_path_length`, `naming_constraints`, `allowed_entity_types` or `constraints`.
        public let name: String
        public let section: String
        public let passed: Bool
        public let detail: String
    }

    /// The issuer of the statement carrying the constraints.
    public let issuer: String
    public let constraints: JSONValue?
    public let checks: [Check]
    /// Entity Types `allowed_entity_types` removed from the subject's metadata (not a failure).
    public let removedEntityTypes: [String]

    public var passed: Bool { checks.allSatisfy(\.passed) }
}

enum ChainConstraints {
    /// Section 6.2 over a chain: each superior's constraints limit everything below it, and
    /// `allowed_entity_types` filters the subject's metadata level by level. `subordinate` are
    /// the chain's Subordinate Statements, the subject's superior's first. `failure` is the
    /// first violation, in the words the validator reports it with.
    static func evaluate(leaf: EntityStatement, subordinate: [EntityStatement])
        -> (verdicts: [ConstraintVerdict], metadata: [String: JSONValue], failure: String?) {
        var metadata = leaf.metadata ?? [:]
        var verdicts: [ConstraintVerdict] = []
        var failure: String?
        for (j, s) in subordinate.enumerated() {
            guard let c = s.constraints else {
                verdicts.append(ConstraintVerdict(issuer: s.issuer, constraints: nil, checks: [], removedEntityTypes: []))
                continue
            }
            let constraints: FederationConstraints
            do { constraints = try FederationConstraints(json: c) } catch {
                failure = failure ?? "constraints from \(s.issuer) are malformed: \(error)"
                verdicts.append(ConstraintVerdict(issuer: s.issuer, constraints: c, checks: [
                    .init(name: "constraints", section: "6.2", passed: false, detail: "\(error)"),
                ], removedEntityTypes: []))
                continue
            }
            var checks: [ConstraintVerdict.Check] = []
            func record(_ name: String, _ section: String, _ ok: String, _ check: () throws(ConstraintError) -> Void) {
                do {
                    try check()
                    checks.append(.init(name: name, section: section, passed: true, detail: ok))
                } catch {
                    failure = failure ?? "constraint of \(s.issuer) violated: \(error)"
                    checks.append(.init(name: name, section: section, passed: false, detail: "\(error)"))
                }
            }
            // Intermediates between this issuer and the subject: the statements below this one.
            if let max = constraints.maxPathLength {
                record("max_path_length", "6.2.1", "\(j) intermediate(s) below, at most \(max) allowed") { () throws(ConstraintError) in
                    try constraints.check(intermediatesBelow: j)
                }
                if checks.last?.passed == false {
                    checks[checks.count - 1] = .init(name: "max_path_length", section: "6.2.1", passed: false,
                                                     detail: "\(j) intermediate(s) below \(s.issuer), at most \(max) allowed")
                }
            }
            if constraints.permittedNames != nil || constraints.excludedNames != nil {
                for k in 0...j {
                    let id = k == 0 ? leaf.subject : subordinate[k - 1].issuer
                    record("naming_constraints", "6.2.2", "\(id) is within the names") { () throws(ConstraintError) in
                        try constraints.check(entityID: id)
                    }
                }
            }
            let removed = constraints.disallowedEntityTypes(in: metadata)
            if let allowed = constraints.allowedEntityTypes {
                checks.append(.init(name: "allowed_entity_types", section: "6.2.3", passed: true,
                                    detail: removed.isEmpty ? "allowed: \(allowed.joined(separator: ", ")); nothing removed"
                                        : "removed from the subject's metadata: \(removed.joined(separator: ", "))"))
            }
            metadata = constraints.filter(metadata: metadata)
            verdicts.append(ConstraintVerdict(issuer: s.issuer, constraints: c, checks: checks, removedEntityTypes: removed))
        }
        return (verdicts, metadata, failure)
    }
}
