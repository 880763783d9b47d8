import JSON

/// How a chain's metadata policy resolved, step by step, for people to read (the explorer's
/// chain page): per Entity Type and parameter, each superior's operators from the Trust Anchor
/// down, the merged operators, the subject's value, the value after each operator and the final
/// value; or where it failed. Computed by `MetadataPolicy.trace`, which runs the very merge and
/// application `resolve` runs (MetadataPolicyChain.swift) with a recorder watching.
public struct MetadataPolicyTrace: Sendable {
    /// One superior's operators for a parameter, as its statement published them.
    public struct Level: Sendable {
        /// The issuer of the Subordinate Statement carrying the policy.
        public let entityID: String
        public let operators: [String: JSONValue]
    }

    /// The value after one operator of the merged policy (section 6.1.4.2 order).
    public struct Step: Sendable {
        public let operatorName: String
        public let value: JSONValue?
        /// The operator changed the value it was given.
        public let changed: Bool
    }

    public struct Parameter: Sendable {
        public let name: String
        /// Superiors' operators, the Trust Anchor's first; empty when no policy names it.
        public internal(set) var levels: [Level] = []
        /// The merged operators (section 6.1.4.1); nil when no policy names it or merging failed.
        public internal(set) var merged: [String: JSONValue]?
        /// The subject's own value (after `allowed_entity_types`), nil when absent.
        public internal(set) var leafValue: JSONValue?
        /// The immediate superior's `metadata` value, which replaces the subject's (section 3.1.1).
        public internal(set) var superiorValue: JSONValue?
        /// The value after each operator, in the order of application.
        public internal(set) var steps: [Step] = []
        /// The resolved value; nil when absent (or when resolution failed).
        public internal(set) var finalValue: JSONValue?
        /// What changed the subject's value: operator names, or `metadata` for the superior's
        /// own statement. Empty when the final value is the subject's own.
        public internal(set) var changedBy: [String] = []
        /// Resolution failed at this parameter (see `MetadataPolicyTrace.failure`).
        public internal(set) var failed = false

        public var changed: Bool { !changedBy.isEmpty }
    }

    public struct EntityType: Sendable {
        public let name: String
        /// The subject has metadata of this type; a policy alone does not create it.
        public let present: Bool
        public internal(set) var parameters: [Parameter]
    }

    /// Where and why resolution failed, with the specification's section.
    public struct Failure: Sendable, Equatable {
        public enum Stage: String, Sendable {
            /// A policy as published is invalid (structure, operand type, combination).
            case parse
            /// Merging a superior's policy into those above it (section 6.1.4.1).
            case merge
            /// The superior's `metadata` for the subject (section 3.1.1).
            case metadata
            /// Applying the merged policy to the metadata (section 6.1.4.2).
            case apply
        }
        public let stage: Stage
        /// `invalid_policy` or `invalid_metadata`.
        public let code: String
        public let message: String
        /// The statement's issuer whose policy failed to parse or merge.
        public let levelEntityID: String?
        public let entityType: String?
        public let parameter: String?
        /// The section of OpenID Federation 1.0 that the failure breaks.
        public let section: String
    }

    public internal(set) var entityTypes: [EntityType]
    /// The resolved metadata, equal to what `MetadataPolicy.resolve` returns; nil on failure.
    public internal(set) var resolved: [String: JSONValue]?
    public internal(set) var failure: Failure?

    /// The parameter's trace, for tests and pages.
    public func parameter(_ name: String, of type: String) -> Parameter? {
        entityTypes.first { $0.name == type }?.parameters.first { $0.name == name }
    }
}

/// Watches one run of `mergeLevels` and `applyMerged`: where it is (so a thrown error is placed
/// at its level and parameter) and each parameter's values. Never changes a result.
final class PolicyTraceRecorder {
    struct Position {
        var stage: MetadataPolicyTrace.Failure.Stage
        var level: Int?
        var entityType: String?
        var parameter: String?
        init(stage: MetadataPolicyTrace.Failure.Stage, level: Int? = nil, entityType: String? = nil, parameter: String? = nil) {
            self.stage = stage
            self.level = level
            self.entityType = entityType
            self.parameter = parameter
        }
    }

    struct Applied {
        var input: JSONValue?
        var steps: [MetadataPolicyTrace.Step] = []
        var output: JSONValue?
    }

    var position = Position(stage: .parse)
    /// Entity Type → parameter → what applying its merged policy did.
    private(set) var applied: [String: [String: Applied]] = [:]
    private var previous: JSONValue?

    func begin(parameter: String, input: JSONValue?) {
        position.parameter = parameter
        previous = input.flatMap { $0.isNull ? nil : $0 }
        applied[position.entityType ?? "", default: [:]][parameter] = Applied(input: input)
    }

    func step(_ op: PolicyOperator, _ value: JSONValue?) {
        let changed = !Self.same(previous, value)
        previous = value
        applied[position.entityType ?? "", default: [:]][position.parameter ?? ""]?.steps
            .append(.init(operatorName: op.rawValue, value: value, changed: changed))
    }

    func end(output: JSONValue?) {
        applied[position.entityType ?? "", default: [:]][position.parameter ?? ""]?.output = output
    }

    /// Absent and JSON null are the same to the operators (section 6.1.3).
    static func same(_ a: JSONValue?, _ b: JSONValue?) -> Bool {
        switch (a.flatMap { $0.isNull ? nil : $0 }, b.flatMap { $0.isNull ? nil : $0 }) {
        case (nil, nil): return true
        case let (x?, y?): return x.jsonEquals(y)
        default: return false
        }
    }
}
