import Cryptography
import JOSE
import JSON
import Store
import Support

extension PIDProvider {
    /// Mints an access token for `grant` (its `tokenHash` and `expiresAt` are filled in here):
    /// an `orderedToken` (time prefix, 32 random bytes), stored only as `tokenHash`, valid
    /// `configuration.tokenLifetime`.
    /// Returns the token and the stored grant.
    func issueAccessToken(clientID: String?, personaID: String, credentialConfigurationIDs: [String],
                          credentialIdentifiers: [String: String], dpopThumbprint: String?) throws(IssuanceError)
        -> (token: String, grant: AccessGrant) {
        let (token, grant, record) = newAccessToken(
            clientID: clientID, personaID: personaID, credentialConfigurationIDs: credentialConfigurationIDs,
            credentialIdentifiers: credentialIdentifiers, dpopThumbprint: dpopThumbprint)
        try withOAuthStore { () throws(StoreError) in try TokenRepository(database: database).insert(record) }
        return (token, grant)
    }

    /// A fresh access token, its grant and the row that stores it, without storing anything:
    /// the pre-authorized code grant inserts the row in the transaction that redeems the code.
    func newAccessToken(clientID: String?, personaID: String, credentialConfigurationIDs: [String],
                        credentialIdentifiers: [String: String], dpopThumbprint: String?)
        -> (token: String, grant: AccessGrant, record: TokenRecord) {
        let token = Self.orderedToken()
        let now = clock.now()
        let grant = AccessGrant(
            tokenHash: Self.tokenHash(token), clientID: clientID, personaID: personaID,
            credentialConfigurationIDs: credentialConfigurationIDs, credentialIdentifiers: credentialIdentifiers,
            dpopThumbprint: dpopThumbprint, expiresAt: now + configuration.tokenLifetime)
        let grantJSON: JSONValue = [
            "credential_configuration_ids": JSONValue(credentialConfigurationIDs),
            "credential_identifiers": .object(credentialIdentifiers.mapValues(JSONValue.string)),
        ]
        let record = TokenRecord(
            tokenHash: grant.tokenHash, issuer: issuer, clientID: clientID, persona: personaID,
            grant: grantJSON.serialized(), dpopJKT: dpopThumbprint, issuedAt: now, expiresAt: grant.expiresAt)
        return (token, grant, record)
    }

    /// The protected-resource check of the credential, deferred credential and notification
    /// endpoints (RFC 6750 §2.1, RFC 9449 §7): `Authorization: DPoP <token>` with a DPoP proof
    /// for this request (`htm`, `htu` = `request.url`, `ath`, fresh `jti`, key thumbprint =
    /// the token's `cnf.jkt`), or `Authorization: Bearer <token>` for a token that is not
    /// DPoP-bound when DPoP is not required.
    ///
    /// Errors: `invalid_token` (401, `authenticationScheme` set) for a missing, unknown, expired
    /// or wrongly presented token (with no `error` in the challenge when the request carried no
    /// token, or one under a scheme we do not know, RFC 6750 §3.1); `invalid_dpop_proof` (with scheme DPoP) for a bad proof;
    /// `use_dpop_nonce` (401, with a fresh `dpopNonce`) for a stale nonce. A nonce is optional
    /// here: requiring one would cost every credential request a round trip.
    public func accessGrant(for request: ResourceRequest) throws(IssuanceError) -> AccessGrant {
        let challenge = configuration.requireDPoP ? "DPoP" : "Bearer"
        guard let authorization = request.authorization, !authorization.isEmpty else {
            throw IssuanceError.authenticationRequired("an access token is required", scheme: challenge)
        }
        // Searched as UTF-8 bytes (a space is ASCII, so its index is a character boundary), in
        // contiguous memory: by Character and through the generic UTF8View the two searches
        // cost 4,600 instructions per credential request (callgrind, issuance-callgrind.sh);
        // `contains(" ")` on the String was Foundation's substring search (11,000).
        guard let space = authorization.utf8.firstIndex(of: UInt8(ascii: " ")) else {
            throw IssuanceError(.invalidToken, "malformed Authorization header", authenticationScheme: challenge)
        }
        let scheme = authorization[..<space].lowercased()
        let token = authorization[authorization.utf8.index(after: space)...].trimmingLeadingSpaces()
        let tokenHasSpace = token.utf8.withContiguousStorageIfAvailable { $0.contains(UInt8(ascii: " ")) }
            ?? token.utf8.contains(UInt8(ascii: " "))
        guard !token.isEmpty, !tokenHasSpace else {
            throw IssuanceError(.invalidToken, "malformed Authorization header", authenticationScheme: challenge)
        }
        guard scheme == "dpop" || scheme == "bearer" else {
            // RFC 6750 §3.1: an unsupported authentication method counts as no authentication.
            throw IssuanceError.authenticationRequired("unsupported authorization scheme", scheme: challenge)
        }
        let presentedScheme = scheme == "dpop" ? "DPoP" : "Bearer"
        guard let grant = try storedGrant(tokenHash: Self.tokenHash(token)) else {
            throw IssuanceError(.invalidToken, "unknown or expired access token",
                                authenticationScheme: configuration.requireDPoP ? "DPoP" : presentedScheme)
        }
        if scheme == "bearer" {
            // §7.2: a DPoP-bound token sent as a bearer token is refused, as is any bearer
            // token where the issuer requires DPoP.
            if grant.dpopThumbprint != nil || configuration.requireDPoP {
                throw IssuanceError(.invalidToken, "this access token must be used with DPoP", authenticationScheme: "DPoP")
            }
            return grant
        }
        guard let jkt = grant.dpopThumbprint else {
            throw IssuanceError(.invalidToken, "this access token is not DPoP-bound; use the Bearer scheme",
                                authenticationScheme: "DPoP")
        }
        let proof = try verifyDPoPProof(request.dpop, method: request.method, url: request.url, accessToken: String(token),
                                        nonce: .optional, resource: true)
        guard proof.thumbprint == jkt else {
            throw IssuanceError(.invalidToken, "the DPoP proof's key is not the key the token is bound to",
                                authenticationScheme: "DPoP")
        }
        return grant
    }

    /// How tokens are stored and looked up: base64url(SHA-256(token)), behind the token's own
    /// time prefix when it is an `orderedToken`. The row is then keyed in creation order (new
    /// rows share the last leaves of the index instead of a random one each, see
    /// `orderedToken`) while the database still holds nothing a client could present: the
    /// prefix is public, the rest is the hash of the whole token. Tokens of earlier versions
    /// (43 characters, no prefix) keep their plain hash.
    static func tokenHash(_ token: some StringProtocol) -> String {
        let hash = Base64URL.encode(Digest.sha256(Array(token.utf8)))
        guard hasOrderedPrefix(token, length: orderedPrefixLength + 43) else { return hash }
        return String(token.prefix(orderedPrefixLength)) + hash
    }

    private func storedGrant(tokenHash: String) throws(IssuanceError) -> AccessGrant? {
        guard let record = try withOAuthStore({ () throws(StoreError) in
            try TokenRepository(database: database).find(issuer: issuer, tokenHash: tokenHash, now: clock.now())
        }) else { return nil }
        let json = (try? JSONValue.parse(record.grant)) ?? [:]
        var identifiers: [String: String] = [:]
        for (id, value) in json["credential_identifiers"]?.objectValue ?? [:] { identifiers[id] = value.stringValue }
        return AccessGrant(
            tokenHash: record.tokenHash, clientID: record.clientID, personaID: record.persona,
            credentialConfigurationIDs: json["credential_configuration_ids"]?.stringArray ?? [],
            credentialIdentifiers: identifiers, dpopThumbprint: record.dpopJKT, expiresAt: record.expiresAt)
    }
}

extension Substring {
    fileprivate func trimmingLeadingSpaces() -> Substring { drop { $0 == " " } }
}
