import JOSE
import JSON

/// A decoded Entity Statement (section 3): an Entity Configuration when `iss == sub`, otherwise a
/// Subordinate Statement. Decoding performs every syntactic check of section 3.2 (claim types,
/// which claims may appear in which kind of statement, `crit`, `metadata_policy_crit`, null
/// metadata values, the `trust_marks` shape), so a statement that decodes is well-formed; trust
/// comes from `verify(with:)` with keys taken from elsewhere in the chain, and `checkTime`.
public struct EntityStatement: Sendable {
    /// The compact JWS, as served and as embedded in trust chains.
    public let compact: String
    /// The `kid` of the protected header (checked to be a non-empty string).
    public let keyID: String
    /// The parsed JWS of a statement read from elsewhere. Nil for a statement this process signed
    /// (see `init(signedHere:)`): its signature input is needed only if a caller verifies it
    /// against keys that do not include its signer, and then it is parsed on the spot.
    private let parsedJWS: JWS?
    public let claims: [String: JSONValue]
    public let issuer: String
    public let subject: String
    public let issuedAt: Int64
    public let expiresAt: Int64
    public let jwks: JWKSet
    public let metadata: [String: JSONValue]?
    public let authorityHints: [String]
    public let trustAnchorHints: [String]
    public let metadataPolicy: [String: JSONValue]?
    public let metadataPolicyCrit: [String]
    public let constraints: JSONValue?
    public let trustMarks: [TrustMarkEntry]
    /// The `trust_mark_issuers` claim (section 3.1.2): trust mark type → issuers; an empty list
    /// lets anyone issue the type. Only meaningful in a Trust Anchor's configuration.
    public let trustMarkIssuers: [String: [String]]?
    /// The `trust_mark_owners` claim (section 3.1.2) by trust mark type. Trust Anchor only.
    public let trustMarkOwners: [String: TrustMarkOwner]?
    public let sourceEndpoint: String?

    public var isEntityConfiguration: Bool { issuer == subject }

    public static func decode(_ compact: String) throws(FederationError) -> EntityStatement {
        let parsed: (jws: JWS, claims: [String: JSONValue])
        do { parsed = try JWS.parseClaims(compact) } catch { throw .invalidTrustChain("malformed entity statement: \(error)") }
        return try EntityStatement(jws: parsed.jws, claims: parsed.claims)
    }

    /// Checks the header and claims of an already parsed JWS (nothing here verifies the signature).
    init(jws: JWS, claims: [String: JSONValue]) throws(FederationError) {
        let about = claims["iss"]?.stringValue.map { iss in " \(iss) → \(claims["sub"]?.stringValue ?? "?")" } ?? ""
        // Section 3: explicitly typed; section 3.2: kid a non-empty string.
        guard FederationType.matches(jws.type, FederationType.entityStatement) else {
            throw .invalidTrustChain("entity statement\(about): typ must be \(FederationType.entityStatement)")
        }
        guard let kid = jws.keyID, !kid.isEmpty else { throw .invalidTrustChain("entity statement\(about): header has no kid") }
        let decoded: EntityStatementClaims
        do { decoded = try EntityStatementClaims(JSONReader(claims)) } catch {
            throw .invalidTrustChain("entity statement\(about): \(error)")
        }
        self.init(compact: jws.compact, keyID: kid, parsedJWS: jws, claims: claims, decoded: decoded)
    }

    /// A statement this process has just signed, built from the claims it signed instead of
    /// parsing the JWT back (base64 and JSON of the whole payload, about a sixth of a cold
    /// resolve). The same section 3.2 checks run on the claims (`EntityStatementClaims`), except
    /// what `trusted` vouches for: keys taken from the key provider as a typed set, and entity
    /// identifiers already checked by an earlier statement.
    init(signedHere compact: String, keyID: String, claims: [String: JSONValue],
         trusted: EntityStatementClaims.Trusted) throws(FederationError) {
        let decoded: EntityStatementClaims
        do { decoded = try EntityStatementClaims(JSONReader(claims), trusted: trusted) } catch {
            let about = claims["iss"]?.stringValue.map { iss in " \(iss) → \(claims["sub"]?.stringValue ?? "?")" } ?? ""
            throw .invalidTrustChain("entity statement\(about): \(error)")
        }
        self.init(compact: compact, keyID: keyID, parsedJWS: nil, claims: claims, decoded: decoded)
    }

    private init(compact: String, keyID: String, parsedJWS: JWS?, claims: [String: JSONValue], decoded: EntityStatementClaims) {
        self.compact = compact
        self.keyID = keyID
        self.parsedJWS = parsedJWS
        self.claims = claims
        issuer = decoded.issuer
        subject = decoded.subject
        issuedAt = decoded.issuedAt
        expiresAt = decoded.expiresAt
        jwks = decoded.jwks
        metadata = decoded.metadata
        authorityHints = decoded.authorityHints
        trustAnchorHints = decoded.trustAnchorHints
        metadataPolicy = decoded.metadataPolicy
        metadataPolicyCrit = decoded.metadataPolicyCrit
        constraints = decoded.constraints
        trustMarks = decoded.trustMarks
        trustMarkIssuers = decoded.trustMarkIssuers
        trustMarkOwners = decoded.trustMarkOwners
        sourceEndpoint = decoded.sourceEndpoint
    }

    /// Verifies the signature with keys the caller already trusts.
    public func verify(with keys: JWKSet) throws(FederationError) {
        do {
            let jws = try parsedJWS ?? JWS.parse(compact)
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

/// One member of a Trust Anchor's `trust_mark_owners` claim: who owns a trust mark type, and the
/// keys its delegations (section 7.2) are signed with.
public struct TrustMarkOwner: Hashable, Sendable {
    public let id: String
    public let keys: JWKSet
    public init(id: String, keys: JWKSet) {
        self.id = id
        self.keys = keys
    }
}

extension FederationType {
    /// `typ` compares case-insensitively and may carry the `application/` prefix (RFC 7515 §4.1.9).
    static func matches(_ typ: String?, _ expected: String) -> Bool {
        guard var t = typ?.lowercased() else { return false }
        if t.hasPrefix("application/") { t.removeFirst("application/".count) }
        return t == expected
    }
}
