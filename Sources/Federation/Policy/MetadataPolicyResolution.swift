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
    /// An Entity Type with a policy but no metadata stays absent. The steps are those of
    /// `mergeLevels` and `applyMerged` (MetadataPolicyChain.swift), shared with the resolver's
    /// cache and the explorer's trace.
    public static func resolve(
        leafMetadata: [String: JSONValue],
        superiorMetadata: [String: JSONValue]?,
        policies: [(policy: [String: JSONValue], crit: [String])]
    ) throws(MetadataPolicyError) -> [String: JSONValue] {
        let critical = Set(policies.flatMap(\.crit))
        var levels: [[String: Parsed]] = []
        for p in policies { levels.append(try MetadataPolicyParsing.policy(.object(p.policy), critical: critical)) }
        return try applyMerged(try mergeLevels(levels), leafMetadata: leafMetadata, superiorMetadata: superiorMetadata)
    }
}
