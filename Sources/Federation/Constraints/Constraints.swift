import JSON

/// The `constraints` claim of a Subordinate Statement (section 6.2). Each statement's
/// constraints are applied on their own to the part of the chain below its issuer.
public struct FederationConstraints: Equatable, Sendable {
    /// Most Intermediates allowed between the issuer and the Trust Chain subject (6.2.1).
    public var maxPathLength: Int?
    /// Domain name constraints on subordinate Entity Identifiers (6.2.2).
    public var permittedNames: [String]?
    public var excludedNames: [String]?
    /// Entity Types subordinates may have besides `federation_entity` (6.2.3).
    public var allowedEntityTypes: [String]?

    static let federationEntity = "federation_entity"

    public init(maxPathLength: Int? = nil, permittedNames: [String]? = nil, excludedNames: [String]? = nil, allowedEntityTypes: [String]? = nil) {
        self.maxPathLength = maxPathLength
        self.permittedNames = permittedNames
        self.excludedNames = excludedNames
        self.allowedEntityTypes = allowedEntityTypes
    }

    /// Parses `{"max_path_length": …, "naming_constraints": {"permitted": […], "excluded": […]},
    /// "allowed_entity_types": […]}`. Unknown constraint parameters are ignored, as section 6.2
    /// requires.
    public init(json: JSONValue) throws(ConstraintError) {
        guard let o = json.objectValue else { throw .malformed("constraints must be a JSON object, not \(json.typeName)") }

        if let m = o["max_path_length"] {
            // intValue also takes 2.0: some encoders write integers as floats.
            guard let n = m.intValue, n >= 0, n <= Int64(Int32.max) else {
                throw .malformed("max_path_length must be an integer >= 0")
            }
            maxPathLength = Int(n)
        }

        if let nc = o["naming_constraints"] {
            guard let names = nc.objectValue else { throw .malformed("naming_constraints must be a JSON object") }
            permittedNames = try names["permitted"].map { v throws(ConstraintError) in try NamingConstraints.names(v, "permitted") }
            excludedNames = try names["excluded"].map { v throws(ConstraintError) in try NamingConstraints.names(v, "excluded") }
        }

        if let t = o["allowed_entity_types"] {
            guard let types = t.stringArray else { throw .malformed("allowed_entity_types must be an array of strings") }
            // federation_entity is always allowed and the spec forbids listing it (6.2.3).
            guard !types.contains(Self.federationEntity) else {
                throw .malformed("allowed_entity_types must not include federation_entity")
            }
            allowedEntityTypes = types
        }
    }

    public var jsonValue: JSONValue {
        var o: [String: JSONValue] = [:]
        if let maxPathLength { o["max_path_length"] = .int(Int64(maxPathLength)) }
        if permittedNames != nil || excludedNames != nil {
            var nc: [String: JSONValue] = [:]
            if let permittedNames { nc["permitted"] = JSONValue(permittedNames) }
            if let excludedNames { nc["excluded"] = JSONValue(excludedNames) }
            o["naming_constraints"] = .object(nc)
        }
        if let allowedEntityTypes { o["allowed_entity_types"] = JSONValue(allowedEntityTypes) }
        return .object(o)
    }

    /// `intermediatesBelow`: Intermediates between the statement's issuer and the subject; a
    /// Trust Anchor's statement about the subject's own superior has zero (6.2.1).
    public func check(intermediatesBelow: Int) throws(ConstraintError) {
        if let maxPathLength, intermediatesBelow > maxPathLength { throw .maxPathLengthExceeded }
    }

    /// Checks one subordinate Entity Identifier against the naming constraints: RFC 5280
    /// section 4.2.1.10 URI semantics on the host part, excluded names winning over permitted.
    public func check(entityID: String) throws(ConstraintError) {
        guard permittedNames != nil || excludedNames != nil else { return }
        guard let host = NamingConstraints.host(ofURL: entityID) else {
            throw .namingConstraintViolated("\(entityID) has no host to check")
        }
        if let excluded = excludedNames, let hit = excluded.first(where: { NamingConstraints.matches(host: host, constraint: $0) }) {
            throw .namingConstraintViolated("\(host) is excluded by \(hit)")
        }
        // As in RFC 5280, the permitted subtrees restrict names only when there are some.
        if let permitted = permittedNames, !permitted.isEmpty,
           !permitted.contains(where: { NamingConstraints.matches(host: host, constraint: $0) }) {
            throw .namingConstraintViolated("\(host) is not within the permitted names")
        }
    }

    /// Removes the Entity Types the constraint does not allow: section 6.2.3 says to drop them
    /// from the subject's metadata (after the superior's `metadata`, before metadata policy),
    /// not to reject the chain. `federation_entity` always stays.
    public func filter(metadata: [String: JSONValue]) -> [String: JSONValue] {
        guard let allowed = allowedEntityTypes else { return metadata }
        let keep = Set(allowed).union([Self.federationEntity])
        return metadata.filter { keep.contains($0.key) }
    }

    /// The Entity Types `filter(metadata:)` would remove, for callers that report them.
    public func disallowedEntityTypes(in metadata: [String: JSONValue]) -> [String] {
        guard let allowed = allowedEntityTypes else { return [] }
        let keep = Set(allowed).union([Self.federationEntity])
        return metadata.keys.filter { !keep.contains($0) }.sorted()
    }
}
