import JSON

extension MetadataPolicy {
    /// Reads a Subordinate Statement's `metadata_policy_crit` claim (section 3.1.3): absent
    /// means none; present, it must be a non-empty array of operator names, and the standard
    /// operators do not belong in it because every implementation understands them.
    public static func criticalOperators(from claim: JSONValue?) throws(MetadataPolicyError) -> [String] {
        guard let claim else { return [] }
        guard let names = claim.stringArray, !names.isEmpty else {
            throw .invalidPolicy("metadata_policy_crit must be a non-empty array of strings")
        }
        if let standard = names.first(where: { PolicyOperator.standardNames.contains($0) }) {
            throw .invalidPolicy("metadata_policy_crit must not list the standard operator \(standard)")
        }
        return names
    }
}
