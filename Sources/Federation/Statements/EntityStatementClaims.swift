import JOSE
import JSON

/// The claims of an Entity Statement read and checked as section 3.2 (Entity Statement
/// Validation) requires of their syntax; every failure names the claim path. Signature, time
/// and chain checks are not here.
struct EntityStatementClaims {
    var issuer: String
    var subject: String
    var issuedAt: Int64
    var expiresAt: Int64
    var jwks: JWKSet
    var metadata: [String: JSONValue]?
    var authorityHints: [String] = []
    var trustAnchorHints: [String] = []
    var metadataPolicy: [String: JSONValue]?
    var metadataPolicyCrit: [String] = []
    var constraints: JSONValue?
    var trustMarks: [TrustMarkEntry] = []
    var trustMarkIssuers: [String: [String]]?
    var trustMarkOwners: [String: TrustMarkOwner]?
    var sourceEndpoint: String?

    /// Claims section 3.1 specifies for Entity Statements (the explicit registration ones of
    /// 3.1.4 and 3.1.5 included): `crit` may not list them, since every implementation knows them.
    static let specified: Set<String> = [
        "iss", "sub", "iat", "exp", "jwks", "metadata", "crit",
        "authority_hints", "trust_anchor_hints", "trust_marks", "trust_mark_issuers", "trust_mark_owners",
        "constraints", "metadata_policy", "metadata_policy_crit", "source_endpoint",
        "aud", "trust_anchor",
    ]
    /// Extension claims this implementation understands and processes; `crit` may list only these.
    static let understoodExtensions: Set<String> = []
    /// Section 3.1.2: only in Entity Configurations (3.2: "the Entity Statement MUST be an Entity Configuration").
    static let configurationOnly = ["authority_hints", "trust_anchor_hints", "trust_marks", "trust_mark_issuers", "trust_mark_owners"]
    /// Section 3.1.3: only in Subordinate Statements.
    static let subordinateOnly = ["metadata_policy", "metadata_policy_crit", "constraints", "source_endpoint"]

    init(_ r: JSONReader, trusted: Trusted? = nil) throws(JSONReadError) {
        let checked = trusted?.identifiers
        // Entity Identifiers (section 1.2) are URLs with a host and no query or fragment.
        issuer = try Self.url(r.field("iss"), .identifier, checked: checked)
        subject = try Self.url(r.field("sub"), .identifier, checked: checked)
        issuedAt = try r.int("iat")
        expiresAt = try r.int("exp")
        if let keys = trusted?.jwks {
            jwks = try Self.jwkSet(r.field("jwks"), typed: keys)
        } else {
            jwks = try Self.jwkSet(r.field("jwks"))
        }

        let isConfiguration = issuer == subject
        for name in isConfiguration ? Self.subordinateOnly : Self.configurationOnly where r.contains(name) {
            throw r.invalid(name, isConfiguration
                ? "must not appear in an entity configuration, only in subordinate statements (section 3.1.3)"
                : "must not appear in a subordinate statement, only in entity configurations (section 3.1.2)")
        }

        if let crit = r.optionalField("crit") { try Self.checkCrit(crit, claims: r) }
        if let m = try r.optionalObject("metadata") { metadata = try Self.metadata(m) }
        authorityHints = try Self.identifiers(r.optionalField("authority_hints"), checked: checked) ?? []
        trustAnchorHints = try Self.identifiers(r.optionalField("trust_anchor_hints"), checked: checked) ?? []

        // The policy's own structure is checked when a chain is resolved, where a fault is
        // reported as `invalid_metadata` like the other policy errors of section 6.1.
        metadataPolicy = try r.optionalObject("metadata_policy")?.object
        if let crit = r.optionalField("metadata_policy_crit") { metadataPolicyCrit = try Self.policyCrit(crit) }
        if let c = r.optionalField("constraints") {
            do { _ = try FederationConstraints(json: c.value) } catch { throw c.invalid("\(error)") }
            constraints = c.value
        }

        if let marks = try r.optionalArray("trust_marks") { trustMarks = try marks.map(Self.trustMark) }
        if let issuers = try r.optionalObject("trust_mark_issuers") {
            var byType: [String: [String]] = [:]
            for (type, list) in issuers.members { byType[type] = try Self.identifiers(list, nonEmpty: false) }
            trustMarkIssuers = byType
        }
        if let owners = try r.optionalObject("trust_mark_owners") {
            var byType: [String: TrustMarkOwner] = [:]
            for (type, owner) in owners.members {
                let o = try owner.object()
                byType[type] = TrustMarkOwner(id: try o.url("sub", .identifier), keys: try Self.jwkSet(o.field("jwks")))
            }
            trustMarkOwners = byType
        }
        sourceEndpoint = try r.optionalField("source_endpoint").map { f throws(JSONReadError) in try Self.url(f, .httpOrHTTPS, checked: checked) }
    }

    /// A JWK Set with at least one key, each with a `kid` unique in the set (section 3.1.1), and
    /// each a valid public key of a type this implementation reads (others are skipped).
    static func jwkSet(_ f: JSONField) throws(JSONReadError) -> JWKSet {
        let keys = try f.object().array("keys", nonEmpty: true)
        var kids: Set<String> = []
        for key in keys {
            let kid = try key.object().nonEmptyString("kid")
            guard kids.insert(kid).inserted else { throw key.invalid("kid \(kid) is not unique in the set") }
        }
        do { return try JWKSet(json: f.value) } catch { throw f.invalid("is not a valid JWK set: \(error)") }
    }

    /// `jwkSet(_:)` for the keys the key provider gave as a typed set, which the claim was
    /// serialized from: the same shape rules, without decoding every key again.
    static func jwkSet(_ f: JSONField, typed keys: JWKSet) throws(JSONReadError) -> JWKSet {
        guard !keys.keys.isEmpty else { throw f.invalid("keys must not be empty") }
        var kids: Set<String> = []
        for key in keys.keys {
            guard let kid = key.kid, !kid.isEmpty else { throw f.invalid("every key needs a non-empty kid") }
            guard kids.insert(kid).inserted else { throw f.invalid("kid \(kid) is not unique in the set") }
        }
        return keys
    }

    /// Section 3.2: each name must be an extension claim (not one this specification defines)
    /// that is understood; this implementation understands none, so any extension is refused.
    static func checkCrit(_ f: JSONField, claims: JSONReader) throws(JSONReadError) {
        for (i, name) in try f.stringArray(nonEmpty: true).enumerated() {
            let element = JSONField(.string(name), path: f.path.appending(index: i))
            if specified.contains(name) {
                throw element.invalid("\(name) is defined by the specification; crit may only list extension claims (section 3.1.1)")
            }
            if !understoodExtensions.contains(name) {
                throw element.invalid("critical extension claim \(name) is not understood")
            }
        }
    }

    /// Section 5: each Entity Type's metadata is an object, and no parameter is `null`.
    static func metadata(_ m: JSONReader) throws(JSONReadError) -> [String: JSONValue] {
        // The values are looked at directly first; the reader, which sorts members and builds
        // the path of each, only names the fault when there is one (every configuration a
        // resolve reads passes through here).
        let wellFormed = m.object.values.allSatisfy { type in
            guard case .object(let parameters) = type else { return false }
            return !parameters.values.contains { $0.isNull }
        }
        if wellFormed { return m.object }
        for (_, type) in m.members {
            for (_, parameter) in try type.object().members where parameter.value.isNull {
                throw parameter.invalid("must not be null (section 5)")
            }
        }
        return m.object
    }

    /// A non-empty array of Entity Identifiers (`authority_hints`, `trust_anchor_hints`, 3.1.2).
    static func identifiers(_ f: JSONField?, nonEmpty: Bool = true, checked: CheckedIdentifiers? = nil) throws(JSONReadError) -> [String]? {
        guard let f else { return nil }
        return try f.array(nonEmpty: nonEmpty).map { e throws(JSONReadError) in try url(e, .identifier, checked: checked) }
    }

    /// `f.url(rule)`, skipped for a string `checked` holds: it passed the Entity Identifier
    /// rule, which is stricter than every other http(s) rule (no user information, query or
    /// fragment). A string that passes the identifier rule is added to `checked`.
    static func url(_ f: JSONField, _ rule: JSONField.URLRule, checked: CheckedIdentifiers?) throws(JSONReadError) -> String {
        guard let checked else { return try f.url(rule) }
        if case .string(let s) = f.value {
            if checked.contains(s) { return s }
            if isPlainIdentifier(s) {
                checked.insert(s)
                return s
            }
        }
        if let s = try? f.url(.identifier) {
            checked.insert(s)
            return s
        }
        return try f.url(rule)
    }

    /// Whether `s` is an Entity Identifier of the plainest shape: `http(s)://`, a host of
    /// letters, digits, dots and hyphens with an optional port, and a path of unreserved
    /// characters (RFC 3986 §2.3) and slashes. Every such string passes `url(.identifier)`,
    /// which is the check for anything else; this one reads the bytes once, where the general
    /// one parses a URL, for every leaf a cold resolve names for the first time (measured: see
    /// docs/performance.md).
    static func isPlainIdentifier(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { b -> Bool in
            let https = Array("https://".utf8), http = Array("http://".utf8)
            var i: Int
            if b.starts(with: https) { i = https.count } else if b.starts(with: http) { i = http.count } else { return false }
            let hostStart = i
            while i < b.count, isHostByte(b[i]) { i += 1 }
            guard i > hostStart else { return false }
            if i < b.count, b[i] == UInt8(ascii: ":") {
                i += 1
                let portStart = i
                while i < b.count, b[i] >= UInt8(ascii: "0"), b[i] <= UInt8(ascii: "9") { i += 1 }
                guard i > portStart, i - portStart <= 5 else { return false }
            }
            guard i == b.count || b[i] == UInt8(ascii: "/") else { return false }
            while i < b.count {
                let c = b[i]
                guard isHostByte(c) || c == UInt8(ascii: "/") || c == UInt8(ascii: "_") || c == UInt8(ascii: "~") else { return false }
                i += 1
            }
            return true
        }
    }

    private static func isHostByte(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
            || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: ".") || c == UInt8(ascii: "-")
    }

    /// Section 3.1.3: not empty, and only additional operators, which must be understood: this
    /// policy engine implements the standard operators only, so any name here is refused.
    static func policyCrit(_ f: JSONField) throws(JSONReadError) -> [String] {
        let names = try f.stringArray(nonEmpty: true)
        for (i, name) in names.enumerated() {
            let element = JSONField(.string(name), path: f.path.appending(index: i))
            if PolicyOperator.standardNames.contains(name) {
                throw element.invalid("\(name) is a standard operator; metadata_policy_crit may only list additional ones (section 3.1.3)")
            }
            throw element.invalid("critical metadata policy operator \(name) is not understood")
        }
        return names
    }

    /// Section 3.2: an object with `trust_mark_type` and `trust_mark`, whose JWT carries the same
    /// `trust_mark_type`. Whether the mark is trusted is decided later (section 7.3).
    static func trustMark(_ f: JSONField) throws(JSONReadError) -> TrustMarkEntry {
        let o = try f.object()
        let type = try o.nonEmptyString("trust_mark_type")
        let jwt = try o.string("trust_mark")
        let markType: JSONValue?
        do { markType = try JWS.parseClaims(jwt).claims["trust_mark_type"] } catch {
            throw o.invalid("trust_mark", "is not a signed JWT: \(error)")
        }
        guard markType == .string(type) else {
            throw o.invalid("trust_mark_type", "\(type) differs from the trust_mark_type of the trust mark JWT")
        }
        return TrustMarkEntry(trustMarkType: type, trustMark: jwt)
    }
}
