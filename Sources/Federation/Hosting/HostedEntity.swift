import Cryptography
import JSON

/// An entity this server hosts, as declared by a file in `Entities/` (already validated and with
/// names turned into entity IDs by the loader).
///
/// A value with its fields in one shared, immutable box: the catalog, the host's index by entity
/// ID and the next reload all hold the same entity, and at 100,000 entities every copy of a
/// 170-byte struct (and every dictionary bucket sized for one) would be megabytes. What only
/// superiors and issuers declare sits in a second box that a plain leaf does without. The metadata is
/// kept as its serialized JSON, one allocation instead of a dictionary of small heap strings;
/// it is materialized only when an Entity Configuration is signed, which the signed-statement
/// cache makes rare.
public struct HostedEntity: Sendable {
    private final class Storage: Sendable {
        let name: String
        let entityID: String
        let isTrustAnchor: Bool
        let signingAlgorithm: SignatureAlgorithm
        let lifetime: Int64
        let authorityHints: [String]
        let metadata: [UInt8]
        /// Nil for the common leaf that declares nothing of a superior's or an issuer's role.
        let role: Role?

        init(name: String, entityID: String, isTrustAnchor: Bool, signingAlgorithm: SignatureAlgorithm, lifetime: Int64,
             authorityHints: [String], metadata: [UInt8], role: Role?) {
            self.name = name
            self.entityID = entityID
            self.isTrustAnchor = isTrustAnchor
            self.signingAlgorithm = signingAlgorithm
            self.lifetime = lifetime
            self.authorityHints = authorityHints
            self.metadata = metadata
            self.role = role
        }
    }

    /// What superiors, trust anchors and trust mark issuers declare: a few entities of 100,000.
    private final class Role: Sendable {
        let subordinateDefaults: SubordinatePolicy
        let subordinates: [String: SubordinateEntry]
        let trustMarkIssuers: [String: [String]]
        let trustMarkOwners: [String: String]
        let trustMarksIssued: [TrustMarkIssuance]
        /// `services` of the file (e.g. `pid_provider`), for the composition root to start.
        let services: [String: JSONValue]

        init(subordinateDefaults: SubordinatePolicy, subordinates: [String: SubordinateEntry], trustMarkIssuers: [String: [String]],
             trustMarkOwners: [String: String], trustMarksIssued: [TrustMarkIssuance], services: [String: JSONValue]) {
            self.subordinateDefaults = subordinateDefaults
            self.subordinates = subordinates
            self.trustMarkIssuers = trustMarkIssuers
            self.trustMarkOwners = trustMarkOwners
            self.trustMarksIssued = trustMarksIssued
            self.services = services
        }

        var isEmpty: Bool {
            subordinateDefaults == SubordinatePolicy() && subordinates.isEmpty && trustMarkIssuers.isEmpty
                && trustMarkOwners.isEmpty && trustMarksIssued.isEmpty && services.isEmpty
        }
    }

    private let storage: Storage

    public var name: String { storage.name }
    public var entityID: String { storage.entityID }
    public var isTrustAnchor: Bool { storage.isTrustAnchor }
    public var authorityHints: [String] { storage.authorityHints }
    /// The declared metadata, entity type → object (parsed from the stored serialization on each call).
    public var metadata: [String: JSONValue] {
        // The bytes are our own serializer's output of an object, so they always parse back.
        (try? JSONValue.parse(storage.metadata))?.objectValue ?? [:]
    }
    /// Put into every subordinate statement this entity issues, unless a subordinate's own entry replaces a member.
    public var subordinateDefaults: SubordinatePolicy { storage.role?.subordinateDefaults ?? SubordinatePolicy() }
    /// Explicit subordinates keyed by entity ID (local ones are also found through their `authority_hints`).
    public var subordinates: [String: SubordinateEntry] { storage.role?.subordinates ?? [:] }
    /// Trust Anchor only: trust mark type → issuer entity IDs.
    public var trustMarkIssuers: [String: [String]] { storage.role?.trustMarkIssuers ?? [:] }
    /// Trust Anchor only: trust mark type → owner entity ID.
    public var trustMarkOwners: [String: String] { storage.role?.trustMarkOwners ?? [:] }
    public var trustMarksIssued: [TrustMarkIssuance] { storage.role?.trustMarksIssued ?? [] }
    /// The services the entity runs besides the federation (`services` of its file), by name.
    public var services: [String: JSONValue] { storage.role?.services ?? [:] }
    /// Lifetime in seconds of every statement this entity signs.
    public var lifetime: Int64 { storage.lifetime }
    public var signingAlgorithm: SignatureAlgorithm { storage.signingAlgorithm }

    public init(
        name: String, entityID: String, isTrustAnchor: Bool = false, authorityHints: [String] = [],
        metadata: [String: JSONValue] = [:], subordinateDefaults: SubordinatePolicy = SubordinatePolicy(),
        subordinates: [String: SubordinateEntry] = [:], trustMarkIssuers: [String: [String]] = [:],
        trustMarkOwners: [String: String] = [:], trustMarksIssued: [TrustMarkIssuance] = [],
        lifetime: Int64 = 86_400, signingAlgorithm: SignatureAlgorithm = .ES256, services: [String: JSONValue] = [:]
    ) {
        let role = Role(subordinateDefaults: subordinateDefaults, subordinates: subordinates, trustMarkIssuers: trustMarkIssuers,
                        trustMarkOwners: trustMarkOwners, trustMarksIssued: trustMarksIssued, services: services)
        storage = Storage(
            name: name, entityID: entityID, isTrustAnchor: isTrustAnchor, signingAlgorithm: signingAlgorithm, lifetime: lifetime,
            authorityHints: authorityHints, metadata: Self.exactBytes(metadata), role: role.isEmpty ? nil : role)
    }

    private init(storage: Storage) { self.storage = storage }

    /// The same entity with other metadata: services add what they generate (e.g. the PID
    /// Provider's issuer metadata) before the federation signs the entity configuration.
    public func replacingMetadata(_ metadata: [String: JSONValue]) -> HostedEntity {
        let s = storage
        return HostedEntity(storage: Storage(
            name: s.name, entityID: s.entityID, isTrustAnchor: s.isTrustAnchor, signingAlgorithm: s.signingAlgorithm,
            lifetime: s.lifetime, authorityHints: s.authorityHints, metadata: Self.exactBytes(metadata), role: s.role))
    }

    /// The serialized metadata in an array of exactly its size: the serializer's appends leave
    /// up to twice the length allocated, for every hosted entity.
    private static func exactBytes(_ metadata: [String: JSONValue]) -> [UInt8] {
        let bytes = JSONValue.object(metadata).bytes
        return [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
            count = buffer.initialize(from: bytes).1
        }
    }

    public var issuesTrustMarks: Bool { storage.role?.trustMarksIssued.isEmpty == false }

    /// Every entity ID this entity's declaration names (superiors, subordinates, trust mark
    /// issuers, owners and subjects): a reload may keep this entity only while none of them changed.
    public var referencedEntityIDs: [String] {
        var out = authorityHints + subordinates.keys
        for issuers in trustMarkIssuers.values { out += issuers }
        out += trustMarkOwners.values
        for issued in trustMarksIssued { out += issued.subjects }
        return out
    }
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

/// One subordinate as its superior declares it. Most subordinates are local entities naming
/// their superior in `authority_hints`, with nothing declared beyond the ID: those (100,000 of
/// them in a large federation) cost the ID alone; the rest keep their declaration in a box.
public struct SubordinateEntry: Sendable {
    private final class Declaration: Sendable {
        let policy: SubordinatePolicy
        let jwks: JSONValue?
        let entityTypes: [String]?
        init(policy: SubordinatePolicy, jwks: JSONValue?, entityTypes: [String]?) {
            self.policy = policy
            self.jwks = jwks
            self.entityTypes = entityTypes
        }
    }

    public let entityID: String
    private let declaration: Declaration?

    public var policy: SubordinatePolicy { declaration?.policy ?? SubordinatePolicy() }
    /// Required for a subordinate this server does not host: the keys the superior vouches for.
    public var jwks: JSONValue? { declaration?.jwks }
    /// For remote subordinates, the entity types `list` reports.
    public var entityTypes: [String]? { declaration?.entityTypes }

    public init(entityID: String, policy: SubordinatePolicy = SubordinatePolicy(), jwks: JSONValue? = nil, entityTypes: [String]? = nil) {
        self.entityID = entityID
        let declared = policy != SubordinatePolicy() || jwks != nil || entityTypes != nil
        declaration = declared ? Declaration(policy: policy, jwks: jwks, entityTypes: entityTypes) : nil
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
