import Cryptography
import JSON

/// An entity this server hosts, as declared by a file in `Entities/` (already validated and with
/// names turned into entity IDs by the loader).
public struct HostedEntity: Sendable {
    public let name: String
    public let entityID: String
    public let isTrustAnchor: Bool
    public let authorityHints: [String]
    public let metadata: [String: JSONValue]
    /// Put into every subordinate statement this entity issues, unless a subordinate's own entry replaces a member.
    public let subordinateDefaults: SubordinatePolicy
    /// Explicit subordinates keyed by entity ID (local ones are also found through their `authority_hints`).
    public let subordinates: [String: SubordinateEntry]
    /// Trust Anchor only: trust mark type → issuer entity IDs.
    public let trustMarkIssuers: [String: [String]]
    /// Trust Anchor only: trust mark type → owner entity ID.
    public let trustMarkOwners: [String: String]
    public let trustMarksIssued: [TrustMarkIssuance]
    /// Lifetime in seconds of every statement this entity signs.
    public let lifetime: Int64
    public let signingAlgorithm: SignatureAlgorithm

    public init(
        name: String, entityID: String, isTrustAnchor: Bool = false, authorityHints: [String] = [],
        metadata: [String: JSONValue] = [:], subordinateDefaults: SubordinatePolicy = SubordinatePolicy(),
        subordinates: [String: SubordinateEntry] = [:], trustMarkIssuers: [String: [String]] = [:],
        trustMarkOwners: [String: String] = [:], trustMarksIssued: [TrustMarkIssuance] = [],
        lifetime: Int64 = 86_400, signingAlgorithm: SignatureAlgorithm = .ES256
    ) {
        self.name = name
        self.entityID = entityID
        self.isTrustAnchor = isTrustAnchor
        self.authorityHints = authorityHints
        self.metadata = metadata
        self.subordinateDefaults = subordinateDefaults
        self.subordinates = subordinates
        self.trustMarkIssuers = trustMarkIssuers
        self.trustMarkOwners = trustMarkOwners
        self.trustMarksIssued = trustMarksIssued
        self.lifetime = lifetime
        self.signingAlgorithm = signingAlgorithm
    }

    public var issuesTrustMarks: Bool { !trustMarksIssued.isEmpty }
}

/// The members a superior puts into a subordinate statement besides keys.
public struct SubordinatePolicy: Sendable, Equatable {
    public var metadataPolicy: JSONValue?
    public var metadataPolicyCrit: [String]?
    public var metadata: JSONValue?
    public var constraints: JSONValue?

    public init(metadataPolicy: JSONValue? = nil, metadataPolicyCrit: [String]? = nil, metadata: JSONValue? = nil, constraints: JSONValue? = nil) {
        self.metadataPolicy = metadataPolicy
        self.metadataPolicyCrit = metadataPolicyCrit
        self.metadata = metadata
        self.constraints = constraints
    }

    /// Per member, a subordinate's own value replaces the entity-wide one.
    public func overridden(by specific: SubordinatePolicy) -> SubordinatePolicy {
        SubordinatePolicy(
            metadataPolicy: specific.metadataPolicy ?? metadataPolicy,
            metadataPolicyCrit: specific.metadataPolicyCrit ?? metadataPolicyCrit,
            metadata: specific.metadata ?? metadata,
            constraints: specific.constraints ?? constraints)
    }
}

/// One subordinate as its superior declares it.
public struct SubordinateEntry: Sendable {
    public let entityID: String
    public let policy: SubordinatePolicy
    /// Required for a subordinate this server does not host: the keys the superior vouches for.
    public let jwks: JSONValue?
    /// For remote subordinates, the entity types `list` reports.
    public let entityTypes: [String]?

    public init(entityID: String, policy: SubordinatePolicy = SubordinatePolicy(), jwks: JSONValue? = nil, entityTypes: [String]? = nil) {
        self.entityID = entityID
        self.policy = policy
        self.jwks = jwks
        self.entityTypes = entityTypes
    }
}

/// A trust mark type this entity issues, and to whom.
public struct TrustMarkIssuance: Sendable, Equatable {
    public let trustMarkType: String
    public let subjects: [String]
    public let lifetime: Int64?
    public let logoURI: String?
    public let ref: String?

    public init(trustMarkType: String, subjects: [String], lifetime: Int64? = nil, logoURI: String? = nil, ref: String? = nil) {
        self.trustMarkType = trustMarkType
        self.subjects = subjects
        self.lifetime = lifetime
        self.logoURI = logoURI
        self.ref = ref
    }
}
