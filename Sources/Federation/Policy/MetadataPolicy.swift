import JSON

/// Policy for one Entity Type: metadata parameter name → (operator name → operand).
public typealias EntityTypePolicy = [String: [String: JSONValue]]

/// The metadata policy engine of OpenID Federation 1.0 section 6.1, as pure functions over JSON.
public enum MetadataPolicy {
    /// Validates one `metadata_policy` (all Entity Types) as published in a Subordinate
    /// Statement: structure, operand types and operator combinations. Additional operators are
    /// errors only when listed in `crit` (the statement's `metadata_policy_crit`, or all of
    /// them collected along a chain), since this engine understands none of them.
    public static func validate(_ policy: JSONValue, crit: [String]) throws(MetadataPolicyError) {
        _ = try MetadataPolicyParsing.policy(policy, critical: Set(crit))
    }

    /// Merges two single-Entity-Type policies, superior first (section 6.1.4.1). Parameters
    /// in only one of them are copied; operators in both are merged per operator, and the
    /// merged combination must still be allowed.
    public static func merge(superior: EntityTypePolicy, subordinate: EntityTypePolicy) throws(MetadataPolicyError) -> EntityTypePolicy {
        let sup = try MetadataPolicyParsing.entityType(superior, critical: [])
        let sub = try MetadataPolicyParsing.entityType(subordinate, critical: [])
        return MetadataPolicyParsing.wire(try merge(sup, sub))
    }

    /// Applies a merged single-Entity-Type policy to that Entity Type's metadata (section 6.1.4.2).
    public static func apply(_ policy: EntityTypePolicy, to metadata: [String: JSONValue]) throws(MetadataPolicyError) -> [String: JSONValue] {
        try apply(try MetadataPolicyParsing.entityType(policy, critical: []), to: metadata)
    }

    static func merge(_ sup: MetadataPolicyParsing.Parsed, _ sub: MetadataPolicyParsing.Parsed,
                      recorder: PolicyTraceRecorder? = nil) throws(MetadataPolicyError) -> MetadataPolicyParsing.Parsed {
        var out = sup
        // Sorted so that, of several problems, the same one is always reported.
        for (name, s) in sub.sorted(by: { $0.key < $1.key }) {
            recorder?.position.parameter = name
            out[name] = try sup[name].map { p throws(MetadataPolicyError) in try p.merged(withSubordinate: s, parameter: name) } ?? s
        }
        return out
    }

    static func apply(_ policy: MetadataPolicyParsing.Parsed, to metadata: [String: JSONValue],
                      recorder: PolicyTraceRecorder? = nil) throws(MetadataPolicyError) -> [String: JSONValue] {
        var out = metadata
        for (name, operators) in policy.sorted(by: { $0.key < $1.key }) {
            let isScope = name == MetadataPolicyScope.parameter
            let current = isScope ? metadata[name].map(MetadataPolicyScope.split) : metadata[name]
            recorder?.begin(parameter: name, input: current)
            let result = try operators.apply(to: current, parameter: name, step: recorder?.step)
            out[name] = isScope ? result.map(MetadataPolicyScope.join) : result
            recorder?.end(output: out[name])
        }
        return out
    }
}
