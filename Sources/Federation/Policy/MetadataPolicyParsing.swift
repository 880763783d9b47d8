import JSON

/// Reads the `metadata_policy` structure of section 6.1.2: Entity Type → metadata parameter →
/// operator. Every level must be a JSON object with at least one member.
enum MetadataPolicyParsing {
    /// One Entity Type's policy, typed; unknown operators are dropped unless critical.
    typealias Parsed = [String: PolicyOperatorSet]

    static func policy(_ json: JSONValue, critical: Set<String>) throws(MetadataPolicyError) -> [String: Parsed] {
        guard let types = json.objectValue else {
            throw .invalidPolicy("metadata_policy must be a JSON object, not \(json.typeName)")
        }
        guard !types.isEmpty else { throw .invalidPolicy("metadata_policy must not be empty") }
        var out: [String: Parsed] = [:]
        // Sorted so that, of several problems, the same one is always reported.
        for (type, value) in types.sorted(by: { $0.key < $1.key }) {
            guard let params = value.objectValue else {
                throw .invalidPolicy("metadata_policy for \(type) must be a JSON object, not \(value.typeName)")
            }
            guard !params.isEmpty else { throw .invalidPolicy("metadata_policy for \(type) must not be empty") }
            var parsed: Parsed = [:]
            for (name, ops) in params.sorted(by: { $0.key < $1.key }) {
                guard let operators = ops.objectValue else {
                    throw .invalidPolicy("\(type) policy for \(name) must be a JSON object, not \(ops.typeName)")
                }
                guard !operators.isEmpty else { throw .invalidPolicy("\(type) policy for \(name) has no operators") }
                parsed[name] = try parameter(name, operators, critical: critical)
            }
            out[type] = parsed
        }
        return out
    }

    static func entityType(_ policy: EntityTypePolicy, critical: Set<String>) throws(MetadataPolicyError) -> Parsed {
        var parsed: Parsed = [:]
        for (name, operators) in policy.sorted(by: { $0.key < $1.key }) { parsed[name] = try parameter(name, operators, critical: critical) }
        return parsed
    }

    /// Parses operand types and checks the combination; a policy is invalid on its own before
    /// it is ever merged (section 6.1.4.1).
    static func parameter(_ name: String, _ operators: [String: JSONValue], critical: Set<String>) throws(MetadataPolicyError) -> PolicyOperatorSet {
        let set = try PolicyOperatorSet(parameter: name, operators: operators, critical: critical)
        try set.checkCombinations(parameter: name)
        return set
    }

    static func wire(_ parsed: Parsed) -> EntityTypePolicy {
        parsed.mapValues(\.jsonObject)
    }
}
