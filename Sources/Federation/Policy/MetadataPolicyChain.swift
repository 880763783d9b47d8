import JSON

/// The one implementation of section 6.1.4 over a whole chain: merging the chain's policies from
/// the Trust Anchor down (6.1.4.1), then applying the merged policy to the subject's metadata
/// (6.1.4.2). `MetadataPolicy.resolve`, the resolver's `MetadataPolicyCache` and the explorer's
/// `MetadataPolicyTrace` all go through these two functions; a trace only passes a recorder,
/// which watches the same steps (so what the explorer shows is what `resolve` did).
extension MetadataPolicy {
    typealias Parsed = MetadataPolicyParsing.Parsed

    /// Section 6.1.4.1: `levels` are the parsed policies of the chain's Subordinate Statements,
    /// the Trust Anchor's first; each is merged into what the levels above it merged, per
    /// Entity Type.
    static func mergeLevels(_ levels: [[String: Parsed]], recorder: PolicyTraceRecorder? = nil) throws(MetadataPolicyError) -> [String: Parsed] {
        var merged: [String: Parsed] = [:]
        for (index, level) in levels.enumerated() {
            recorder?.position = .init(stage: .merge, level: index)
            // Sorted so that, of several problems, the same one is always reported.
            for (type, policy) in level.sorted(by: { $0.key < $1.key }) {
                recorder?.position.entityType = type
                merged[type] = try merged[type].map { m throws(MetadataPolicyError) in try merge(m, policy, recorder: recorder) } ?? policy
            }
        }
        return merged
    }

    /// Section 6.1.4.2, after the immediate superior's `metadata` overrides the subject's own
    /// for Entity Types the subject has (section 3.1.1): each Entity Type the subject has is
    /// given its merged policy; an Entity Type with a policy but no metadata stays absent.
    static func applyMerged(_ merged: [String: Parsed], leafMetadata: [String: JSONValue], superiorMetadata: [String: JSONValue]?,
                            recorder: PolicyTraceRecorder? = nil) throws(MetadataPolicyError) -> [String: JSONValue] {
        var metadata = leafMetadata
        recorder?.position = .init(stage: .metadata)
        for (type, stated) in (superiorMetadata ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let current = leafMetadata[type] else { continue }
            recorder?.position.entityType = type
            var params = try parameters(current, type)
            for (name, value) in try parameters(stated, type) { params[name] = value }
            metadata[type] = .object(params)
        }
        for (type, policy) in merged.sorted(by: { $0.key < $1.key }) {
            guard let current = metadata[type] else { continue }
            recorder?.position = .init(stage: .apply, entityType: type)
            metadata[type] = .object(try apply(policy, to: try parameters(current, type), recorder: recorder))
        }
        return metadata
    }

    static func parameters(_ v: JSONValue, _ type: String) throws(MetadataPolicyError) -> [String: JSONValue] {
        guard let o = v.objectValue else { throw .invalidMetadata("metadata for \(type) must be a JSON object, not \(v.typeName)") }
        return o
    }
}
