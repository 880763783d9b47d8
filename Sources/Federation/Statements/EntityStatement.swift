import JOSE
import JSON

/// A decoded Entity Statement (section 3): an Entity Configuration when `iss == sub`, otherwise a
/// Subordinate Statement. Decoding checks structure and claim types only; trust comes from
/// `verify(with:)` with keys taken from elsewhere in the chain.
public struct EntityStatement: Sendable {
    public let jws: JWS
    public let claims: [String: JSONValue]
    public let issuer: String
    public let subject: String
    public let issuedAt: Int64
    public let expiresAt: Int64
    public let jwks: JWKSet
    public let metadata: [String: JSONValue]?
    public let authorityHints: [String]
    public let metadataPolicy: [String: JSONValue]?
    public let metadataPolicyCrit: [String]
    public let constraints: JSONValue?
    public let trustMarks: [TrustMarkEntry]
    public let sourceEndpoint: String?

    public var compact: String { jws.compact }
    public var isEntityConfiguration: Bool { issuer == subject }

    /// Claims this implementation understands, for the `crit` check of section 3.1.
    static let understoodClaims: Set<String> = [
        "iss", "sub", "iat", "exp", "jwks", "metadata", "authority_hints", "metadata_policy",
        "metadata_policy_crit", "constraints", "trust_marks", "trust_mark_issuers", "trust_mark_owners",
        "source_endpoint", "crit",
    ]

    public static func decode(_ compact: String) throws(FederationError) -> EntityStatement {
        let parsed: (jws: JWS, claims: [String: JSONValue])
        do { parsed = try JWS.parseClaims(compact) } catch { throw .invalidTrustChain("malformed entity statement: \(error)") }
        return try EntityStatement(jws: parsed.jws, claims: parsed.claims)
    }

    init(jws: JWS, claims: [String: JSONValue]) throws(FederationError) {
        func fail(_ m: String) -> FederationError { .invalidTrustChain("entity statement: \(m)") }
        guard FederationType.matches(jws.type, FederationType.entityStatement) else {
            throw fail("typ must be \(FederationType.entityStatement)")
        }
        guard jws.keyID != nil else { throw fail("header has no kid") }
        guard let iss = claims["iss"]?.stringValue, !iss.isEmpty else { throw fail("iss missing or not a string") }
        guard let sub = claims["sub"]?.stringValue, !sub.isEmpty else { throw fail("sub missing or not a string") }
        guard let iat = claims["iat"]?.intValue else { throw fail("iat missing or not a number") }
        guard let exp = claims["exp"]?.intValue else { throw fail("exp missing or not a number") }
        guard let jwksJSON = claims["jwks"] else { throw fail("jwks missing") }
        let jwks: JWKSet
        do { jwks = try JWKSet(json: jwksJSON) } catch { throw fail("jwks invalid: \(error)") }
        if let m = claims["metadata"], m.objectValue == nil { throw fail("metadata must be an object") }
        var hints: [String] = []
        if let h = claims["authority_hints"] {
            guard let list = h.stringArray, !list.isEmpty else { throw fail("authority_hints must be a non-empty array of strings") }
            guard iss == sub else { throw fail("authority_hints only belongs in an entity configuration") }
            hints = list
        }
        if let p = claims["metadata_policy"], p.objectValue == nil { throw fail("metadata_policy must be an object") }
        var policyCrit: [String] = []
        if let c = claims["metadata_policy_crit"] {
            guard let list = c.stringArray else { throw fail("metadata_policy_crit must be an array of strings") }
            policyCrit = list
        }
        if let c = claims["constraints"], c.objectValue == nil { throw fail("constraints must be an object") }
        if let crit = claims["crit"] {
            guard let names = crit.stringArray, !names.isEmpty else { throw fail("crit must be a non-empty array of strings") }
            for n in names where !Self.understoodClaims.contains(n) { throw fail("critical claim \(n) is not understood") }
        }
        var marks: [TrustMarkEntry] = []
        if let t = claims["trust_marks"] {
            guard let list = t.arrayValue else { throw fail("trust_marks must be an array") }
            for entry in list {
                guard let type = entry["trust_mark_type"]?.stringValue, let jwt = entry["trust_mark"]?.stringValue else {
                    throw fail("trust_marks entries need trust_mark_type and trust_mark strings")
                }
                marks.append(TrustMarkEntry(trustMarkType: type, trustMark: jwt))
            }
        }
        self.jws = jws
        self.claims = claims
        issuer = iss
        subject = sub
        issuedAt = iat
        expiresAt = exp
        self.jwks = jwks
        metadata = claims["metadata"]?.objectValue
        authorityHints = hints
        metadataPolicy = claims["metadata_policy"]?.objectValue
        metadataPolicyCrit = policyCrit
        constraints = claims["constraints"]
        trustMarks = marks
        sourceEndpoint = claims["source_endpoint"]?.stringValue
    }

    /// Verifies the signature with keys the caller already trusts.
    public func verify(with keys: JWKSet) throws(FederationError) {
        do {
            try jws.verify(keys: keys, allowList: AlgorithmPolicy.federationDefault, expectedType: FederationType.entityStatement)
        } catch {
            throw .invalidTrustChain("signature of statement \(issuer) → \(subject) does not verify: \(error)")
        }
    }

    /// `iat` may not lie in the future (beyond a small skew) and `exp` must not have passed.
    public func checkTime(now: Int64, skew: Int64 = 60) throws(FederationError) {
        if issuedAt > now + skew { throw .invalidTrustChain("statement \(issuer) → \(subject) is issued in the future") }
        if expiresAt <= now { throw .invalidTrustChain("statement \(issuer) → \(subject) has expired") }
    }
}

/// One element of the `trust_marks` claim.
public struct TrustMarkEntry: Hashable, Sendable {
    public let trustMarkType: String
    public let trustMark: String
    public init(trustMarkType: String, trustMark: String) {
        self.trustMarkType = trustMarkType
        self.trustMark = trustMark
    }
    public var jsonValue: JSONValue { ["trust_mark_type": .string(trustMarkType), "trust_mark": .string(trustMark)] }
}

extension FederationType {
    /// `typ` compares case-insensitively and may carry the `application/` prefix (RFC 7515 §4.1.9).
    static func matches(_ typ: String?, _ expected: String) -> Bool {
        guard var t = typ?.lowercased() else { return false }
        if t.hasPrefix("application/") { t.removeFirst("application/".count) }
        return t == expected
    }
}
