import Cryptography
import Federation
import JSON

/// One file of `Entities/` as written, before names are turned into entity IDs. The format is a
/// contract other tools rely on (docs/entities.md): extend it, never rename.
struct EntityFile: Sendable {
    let name: String
    let file: String
    let entityID: String?
    let trustAnchor: Bool
    let authorityHints: [String]
    let metadata: [String: JSONValue]
    let subordinateStatement: SubordinatePolicy
    let subordinates: [(key: String, policy: SubordinatePolicy, jwks: JSONValue?, entityTypes: [String]?)]
    let trustMarkIssuers: [String: [String]]
    let trustMarkOwners: [String: String]
    let trustMarksIssued: [(type: String, subjects: [String], lifetime: Int64?, logoURI: String?, ref: String?)]
    let lifetime: Int64
    let signingAlgorithm: SignatureAlgorithm
    let services: [String: JSONValue]

    static let knownFields: Set<String> = [
        "entity_id", "trust_anchor", "authority_hints", "metadata", "subordinate_statement", "subordinates",
        "trust_mark_issuers", "trust_mark_owners", "trust_marks_issued", "lifetime", "signing_alg", "services",
    ]
    /// File names no entity may have: the server's own paths below the base URL.
    static let reservedNames: Set<String> = ["explorer"]
    /// Services an entity may run: those in the registry (each checks its own fields when it starts).
    static var knownServices: Set<String> { Set(ServiceRegistry.standard.kinds) }
    /// Signing algorithms an entity may choose for its own key (verification accepts more).
    static let signingAlgorithms: [SignatureAlgorithm] = [.ES256, .ES384, .ES512, .EdDSA]

    init(name: String, file: String, json: JSONValue) throws(EntityFileError) {
        func fail(_ field: String?, _ m: String) -> EntityFileError { EntityFileError(file: file, field: field, m) }
        // `<base-url>/explorer/...` are the federation explorer's pages (issue 19): an entity
        // named so would have its endpoints under the same paths.
        if Self.reservedNames.contains(name) {
            throw fail(nil, "the name \"\(name)\" is reserved for the federation explorer's pages (\(name)/...): rename the file")
        }
        guard let o = json.objectValue else { throw fail(nil, "the file must hold one JSON object") }
        if let unknown = Set(o.keys).subtracting(Self.knownFields).sorted().first {
            throw fail(unknown, "unknown field (known: \(Self.knownFields.sorted().joined(separator: ", ")))")
        }
        self.name = name
        self.file = file

        if let v = o["entity_id"] {
            guard let s = v.stringValue, s.hasPrefix("https://") || s.hasPrefix("http://"), !s.hasSuffix("/") else {
                throw fail("entity_id", "must be an absolute http(s) URL without a trailing slash")
            }
            entityID = s
        } else {
            entityID = nil
        }
        if let v = o["trust_anchor"] {
            guard let b = v.boolValue else { throw fail("trust_anchor", "must be true or false") }
            trustAnchor = b
        } else {
            trustAnchor = false
        }
        if let v = o["authority_hints"] {
            guard let hints = v.stringArray, !hints.contains(where: \.isEmpty) else { throw fail("authority_hints", "must be an array of entity names or entity IDs") }
            authorityHints = hints
        } else {
            authorityHints = []
        }
        if trustAnchor && !authorityHints.isEmpty { throw fail("authority_hints", "a trust anchor has no authority hints") }

        if let v = o["metadata"] {
            guard let m = v.objectValue else { throw fail("metadata", "must be an object keyed by entity type") }
            for (type, value) in m where value.objectValue == nil { throw fail("metadata.\(type)", "must be an object") }
            metadata = m
        } else {
            metadata = [:]
        }

        subordinateStatement = try Self.policy(o["subordinate_statement"], field: "subordinate_statement", file: file)

        var subs: [(key: String, policy: SubordinatePolicy, jwks: JSONValue?, entityTypes: [String]?)] = []
        if let v = o["subordinates"] {
            guard let m = v.objectValue else { throw fail("subordinates", "must be an object keyed by entity name or entity ID") }
            for key in m.keys.sorted() {
                let field = "subordinates.\(key)"
                guard let entry = m[key]?.objectValue else { throw fail(field, "must be an object") }
                let allowed: Set<String> = ["metadata_policy", "metadata_policy_crit", "metadata", "constraints", "jwks", "entity_types"]
                if let unknown = Set(entry.keys).subtracting(allowed).sorted().first { throw fail("\(field).\(unknown)", "unknown field") }
                var policyPart = entry
                let jwks = policyPart.removeValue(forKey: "jwks")
                let types = policyPart.removeValue(forKey: "entity_types")
                if let jwks, jwks["keys"]?.arrayValue == nil { throw fail("\(field).jwks", "must be a JWK Set ({\"keys\": [...]})") }
                if let types, types.stringArray == nil { throw fail("\(field).entity_types", "must be an array of strings") }
                subs.append((key, try Self.policy(.object(policyPart), field: field, file: file), jwks, types?.stringArray))
            }
        }
        subordinates = subs

        if let v = o["trust_mark_issuers"] {
            guard trustAnchor else { throw fail("trust_mark_issuers", "only a trust anchor declares trust mark issuers") }
            guard let m = v.objectValue else { throw fail("trust_mark_issuers", "must map trust mark types to arrays of issuers") }
            var out: [String: [String]] = [:]
            for (type, issuers) in m {
                guard let list = issuers.stringArray else { throw fail("trust_mark_issuers.\(type)", "must be an array of entity names or IDs") }
                out[type] = list
            }
            trustMarkIssuers = out
        } else {
            trustMarkIssuers = [:]
        }
        if let v = o["trust_mark_owners"] {
            guard trustAnchor else { throw fail("trust_mark_owners", "only a trust anchor declares trust mark owners") }
            guard let m = v.objectValue else { throw fail("trust_mark_owners", "must map trust mark types to an owner") }
            var out: [String: String] = [:]
            for (type, owner) in m {
                guard let s = owner.stringValue else { throw fail("trust_mark_owners.\(type)", "must be an entity name or ID") }
                out[type] = s
            }
            trustMarkOwners = out
        } else {
            trustMarkOwners = [:]
        }
        var issued: [(type: String, subjects: [String], lifetime: Int64?, logoURI: String?, ref: String?)] = []
        if let v = o["trust_marks_issued"] {
            guard let list = v.arrayValue else { throw fail("trust_marks_issued", "must be an array") }
            for (i, item) in list.enumerated() {
                let field = "trust_marks_issued[\(i)]"
                guard let type = item["trust_mark_type"]?.stringValue, !type.isEmpty else { throw fail("\(field).trust_mark_type", "must be a non-empty string") }
                guard let subjects = item["subjects"]?.stringArray else { throw fail("\(field).subjects", "must be an array of entity names or IDs") }
                var lifetime: Int64?
                if let l = item["lifetime"] {
                    guard let n = l.intValue, n > 0 else { throw fail("\(field).lifetime", "must be a positive number of seconds") }
                    lifetime = n
                }
                if let l = item["logo_uri"], l.stringValue == nil { throw fail("\(field).logo_uri", "must be a string") }
                if let r = item["ref"], r.stringValue == nil { throw fail("\(field).ref", "must be a string") }
                issued.append((type, subjects, lifetime, item["logo_uri"]?.stringValue, item["ref"]?.stringValue))
            }
        }
        trustMarksIssued = issued

        if let v = o["lifetime"] {
            guard let n = v.intValue, n >= 60, n <= 31_536_000 else { throw fail("lifetime", "must be a number of seconds between 60 and 31536000") }
            lifetime = n
        } else {
            lifetime = 86_400
        }
        if let v = o["signing_alg"] {
            guard let s = v.stringValue, let alg = SignatureAlgorithm(rawValue: s), Self.signingAlgorithms.contains(alg) else {
                throw fail("signing_alg", "must be one of \(Self.signingAlgorithms.map(\.rawValue).joined(separator: ", "))")
            }
            signingAlgorithm = alg
        } else {
            signingAlgorithm = .ES256
        }
        if let v = o["services"] {
            guard let m = v.objectValue else { throw fail("services", "must be an object keyed by service name") }
            if let unknown = Set(m.keys).subtracting(Self.knownServices).sorted().first {
                throw fail("services.\(unknown)", "unknown service (known: \(Self.knownServices.sorted().joined(separator: ", ")))")
            }
            for (key, value) in m where value.objectValue == nil { throw fail("services.\(key)", "must be an object") }
            services = m
        } else {
            services = [:]
        }
    }

    private static func policy(_ value: JSONValue?, field: String, file: String) throws(EntityFileError) -> SubordinatePolicy {
        guard let value else { return SubordinatePolicy() }
        guard let o = value.objectValue else { throw EntityFileError(file: file, field: field, "must be an object") }
        let allowed: Set<String> = ["metadata_policy", "metadata_policy_crit", "metadata", "constraints"]
        if field == "subordinate_statement", let unknown = Set(o.keys).subtracting(allowed).sorted().first {
            throw EntityFileError(file: file, field: "\(field).\(unknown)", "unknown field")
        }
        if let p = o["metadata_policy"] {
            do { try MetadataPolicy.validate(p, crit: o["metadata_policy_crit"]?.stringArray ?? []) } catch {
                throw EntityFileError(file: file, field: "\(field).metadata_policy", "\(error)")
            }
        }
        if let c = o["metadata_policy_crit"], c.stringArray == nil {
            throw EntityFileError(file: file, field: "\(field).metadata_policy_crit", "must be an array of operator names")
        }
        if let m = o["metadata"], m.objectValue == nil { throw EntityFileError(file: file, field: "\(field).metadata", "must be an object") }
        if let c = o["constraints"] {
            do { _ = try FederationConstraints(json: c) } catch {
                throw EntityFileError(file: file, field: "\(field).constraints", "\(error)")
            }
        }
        return SubordinatePolicy(metadataPolicy: o["metadata_policy"], metadataPolicyCrit: o["metadata_policy_crit"]?.stringArray,
                                 metadata: o["metadata"], constraints: o["constraints"])
    }
}
