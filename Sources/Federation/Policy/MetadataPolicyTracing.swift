import JSON

extension MetadataPolicy {
    /// `resolve` with a trace (section 6.1.4): the same parsing, `mergeLevels` and
    /// `applyMerged`, with a recorder watching, so `trace(...).resolved` is exactly what
    /// `resolve` returns and `trace(...).failure` is the error it throws, placed at its level
    /// and parameter. `policies` are those of the chain's Subordinate Statements, the Trust
    /// Anchor's first, each with the entity ID of its issuer.
    public static func trace(
        leafMetadata: [String: JSONValue],
        superiorMetadata: [String: JSONValue]?,
        policies: [(entityID: String, policy: [String: JSONValue], crit: [String])]
    ) -> MetadataPolicyTrace {
        let recorder = PolicyTraceRecorder()
        let critical = Set(policies.flatMap(\.crit))
        var merged: [String: Parsed]?
        var resolved: [String: JSONValue]?
        var failure: MetadataPolicyTrace.Failure?
        do throws(MetadataPolicyError) {
            var levels: [[String: Parsed]] = []
            for (index, p) in policies.enumerated() {
                recorder.position = .init(stage: .parse, level: index)
                levels.append(try MetadataPolicyParsing.policy(.object(p.policy), critical: critical))
            }
            let m = try mergeLevels(levels, recorder: recorder)
            merged = m
            resolved = try applyMerged(m, leafMetadata: leafMetadata, superiorMetadata: superiorMetadata, recorder: recorder)
        } catch {
            let at = recorder.position
            failure = .init(stage: at.stage, code: error.code, message: error.message,
                            levelEntityID: at.level.flatMap { policies.indices.contains($0) ? policies[$0].entityID : nil },
                            entityType: at.entityType, parameter: at.parameter,
                            section: section(of: error, at: at.stage))
        }

        var typeNames = Set(leafMetadata.keys)
        for p in policies { typeNames.formUnion(p.policy.keys) }
        var types: [MetadataPolicyTrace.EntityType] = []
        for type in typeNames.sorted() {
            let leaf = leafMetadata[type]?.objectValue
            let superior = leaf == nil ? nil : superiorMetadata?[type]?.objectValue
            var names = Set(leaf.map { Array($0.keys) } ?? [])
            names.formUnion(superior.map { Array($0.keys) } ?? [])
            for p in policies { names.formUnion(p.policy[type]?.objectValue.map { Array($0.keys) } ?? []) }
            var parameters: [MetadataPolicyTrace.Parameter] = []
            for name in names.sorted() {
                var t = MetadataPolicyTrace.Parameter(name: name)
                t.levels = policies.compactMap { p in
                    p.policy[type]?.objectValue?[name]?.objectValue.map { .init(entityID: p.entityID, operators: $0) }
                }
                t.merged = merged?[type]?[name]?.jsonObject
                t.leafValue = leaf?[name]
                t.superiorValue = superior?[name]
                let applied = recorder.applied[type]?[name]
                t.steps = applied?.steps ?? []
                t.finalValue = applied?.output ?? resolved?[type]?.objectValue?[name]
                t.failed = failure.map { $0.entityType == type && $0.parameter == name } ?? false
                if failure == nil || applied != nil, !PolicyTraceRecorder.same(t.leafValue, t.finalValue) {
                    var reasons: [String] = []
                    if let s = t.superiorValue, !PolicyTraceRecorder.same(t.leafValue, s) { reasons.append("metadata") }
                    reasons += t.steps.filter(\.changed).map(\.operatorName)
                    t.changedBy = reasons
                }
                parameters.append(t)
            }
            types.append(.init(name: type, present: leaf != nil, parameters: parameters))
        }
        return MetadataPolicyTrace(entityTypes: types, resolved: failure == nil ? resolved : nil, failure: failure)
    }

    /// The sections of OpenID Federation 1.0 a failure breaks: the stage's, and the operator's
    /// when the message names one.
    static func section(of error: MetadataPolicyError, at stage: MetadataPolicyTrace.Failure.Stage) -> String {
        let base: String
        switch stage {
        case .parse: base = error.message.contains("critical") ? "6.1.3.2" : (error.message.contains("illegal") ? "6.1.3.1" : "6.1.2")
        case .merge: base = "6.1.4.1"
        case .metadata: base = "3.1.1"
        case .apply: base = "6.1.4.2"
        }
        // "p: value mismatch…", "p: failed one_of check", "p: illegal value / add combination".
        let words = error.message.split(whereSeparator: { $0 == " " || $0 == ":" }).map(String.init)
        guard let op = words.lazy.compactMap(PolicyOperator.init(rawValue:)).first, !error.message.contains("illegal") else { return base }
        return "\(base), \(op.section)"
    }
}

extension PolicyOperator {
    /// The operator's own section of OpenID Federation 1.0 (6.1.3.1.1 to 6.1.3.1.7).
    public var section: String {
        "6.1.3.1.\((PolicyOperator.allCases.firstIndex(of: self) ?? 0) + 1)"
    }
}
