import JSON

extension MetadataPolicy {
    /// Resolves the metadata of a Trust Chain subject for all Entity Types (section 6.1.4).
    ///
    /// - `policies`: the `metadata_policy` claims of the chain's Subordinate Statements, from
    ///   the Trust Anchor's downwards, each with its statement's `metadata_policy_crit`.
    ///   Critical operator names are collected from all of them before any is validated.
    /// - `superiorMetadata`: the `metadata` claim of the Immediate Superior's statement about
    ///   the subject; its parameters override the subject's own, but only for Entity Types the
    ///   subject's configuration has (section 3.1.1, `metadata`).
    /// - `leafMetadata`: the subject's Entity Configuration `metadata`. Apply
    ///   `allowed_entity_types` to it before calling: filtering first is the order section 6.2.3
    ///   asks for, because superior metadata cannot add Entity Types.
    ///
    /// An Entity Type with a policy but no metadata stays absent.
    public static func resolve(
        leafMetadata: [String: JSONValue],
        superiorMetadata: [String: JSONValue]?,
        policies: [(policy: [String: JSONValue], crit: [String])]
    ) throws(MetadataPolicyError) -> [String: JSONValue] {
        let critical = Set(policies.flatMap(\.crit))
        var merged: [String: MetadataPolicyParsing.Parsed] = [:]
        for p in policies {
            for (type, policy) in try MetadataPolicyParsing.policy(.object(p.policy), critical: critical) {
                merged[type] = try merged[type].map { m throws(MetadataPolicyError) in try merge(m, policy) } ?? policy
            }
        }

        var metadata = try overriding(leafMetadata, with: superiorMetadata ?? [:])
        for (type, policy) in merged.sorted(by: { $0.key < $1.key }) {
            guard let current = metadata[type] else { continue }
            metadata[type] = .object(try apply(policy, to: try parameters(current, type)))
        }
        return metadata
    }

    private static func overriding(_ leaf: [String: JSONValue], with superior: [String: JSONValue]) throws(MetadataPolicyError) -> [String: JSONValue] {
        var out = leaf
        for (type, stated) in superior {
            guard let current = leaf[type] else { continue }
            var params = try parameters(current, type)
            for (name, value) in try parameters(stated, type) { params[name] = value }
            out[type] = .object(params)
        }
        return out
    }

    private static func parameters(_ v: JSONValue, _ type: String) throws(MetadataPolicyError) -> [String: JSONValue] {
        guard let o = v.objectValue else { throw .invalidMetadata("metadata for \(type) must be a JSON object, not \(v.typeName)") }
        return o
    }
}
