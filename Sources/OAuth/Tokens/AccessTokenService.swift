import Cryptography
import JSON
import Store
import Support

/// Where access tokens are kept, by hash (a copy of the store gives nobody a usable token).
public protocol AccessTokenStore: Sendable {
    func insert(_ token: TokenRecord) throws(StoreError)
    /// The token with this hash, unexpired at `now`.
    func find(issuer: String, tokenHash: String, now: Int64) throws(StoreError) -> TokenRecord?
}

/// The database's `issuance_tokens` table.
extension TokenRepository: AccessTokenStore {}

/// Access tokens of one authorization server: minting (RFC 6749 §5.1), storage by hash, and
/// the protected-resource check (RFC 6750 §2.1, RFC 9449 §7).
public struct AccessTokenService: Sendable {
    public let issuer: String
    /// Seconds a token is valid.
    public let lifetime: Int64
    /// Only DPoP-bound tokens are issued and accepted (HAIP).
    public let requireDPoP: Bool
    public let clock: any Clock
    public let store: any AccessTokenStore
    /// Checks the DPoP proof that comes with a DPoP-bound token.
    public let dpop: DPoPVerifier

    public init(issuer: String, lifetime: Int64, requireDPoP: Bool, clock: any Clock, store: any AccessTokenStore,
                dpop: DPoPVerifier) {
        self.issuer = issuer
        self.lifetime = lifetime
        self.requireDPoP = requireDPoP
        self.clock = clock
        self.store = store
        self.dpop = dpop
    }

    /// Mints and stores an access token. Returns the token and its grant.
    public func issue(clientID: String?, subject: String, details: JSONValue,
                      dpopThumbprint: String?) throws(OAuthError) -> (token: String, grant: AccessGrant) {
        let (token, grant, record) = mint(clientID: clientID, subject: subject, details: details, dpopThumbprint: dpopThumbprint)
        try OAuthError.store { () throws(StoreError) in try store.insert(record) }
        return (token, grant)
    }

    /// A fresh access token, its grant and the row that stores it, without storing anything,
    /// for a caller that inserts the row in a transaction of its own (e.g. the one that
    /// redeems a code). The token is an ordered identifier (time prefix, 32 random bytes),
    /// stored only as `tokenHash`, valid `lifetime`.
    public func mint(clientID: String?, subject: String, details: JSONValue,
                     dpopThumbprint: String?) -> (token: String, grant: AccessGrant, record: TokenRecord) {
        let token = OAuthIdentifiers.ordered()
        let now = clock.now()
        let grant = AccessGrant(tokenHash: Self.tokenHash(token), clientID: clientID, subject: subject, details: details,
                                dpopThumbprint: dpopThumbprint, expiresAt: now + lifetime)
        let record = TokenRecord(
            tokenHash: grant.tokenHash, issuer: issuer, clientID: clientID, persona: subject,
            grant: details.serialized(), dpopJKT: dpopThumbprint, issuedAt: now, expiresAt: grant.expiresAt)
        return (token, grant, record)
    }

    /// The protected-resource check: `Authorization: DPoP <token>` with a DPoP proof for this
    /// request (`htm`, `htu` = `request.url`, `ath`, fresh `jti`, key thumbprint = the token's
    /// `cnf.jkt`), or `Authorization: Bearer <token>` for a token that is not DPoP-bound when
    /// DPoP is not required.
    ///
    /// Errors: `invalid_token` (401, `authenticationScheme` set) for a missing, unknown, expired
    /// or wrongly presented token (with no `error` in the challenge when the request carried no
    /// token, or one under a scheme we do not know, RFC 6750 §3.1); `invalid_dpop_proof` (with
    /// scheme DPoP) for a bad proof; `use_dpop_nonce` (401, with a fresh `dpopNonce`) for a
    /// stale nonce. A nonce is optional here: requiring one would cost every request a round trip.
    public func grant(for request: ResourceRequest) throws(OAuthError) -> AccessGrant {
        let challenge = requireDPoP ? "DPoP" : "Bearer"
        guard let authorization = request.authorization, !authorization.isEmpty else {
            throw OAuthError.authenticationRequired("an access token is required", scheme: challenge)
        }
        // Searched as UTF-8 bytes (a space is ASCII, so its index is a character boundary), in
        // contiguous memory, as every protected request passes here; `contains(" ")` on the
        // String would be Foundation's substring search.
        guard let space = authorization.utf8.firstIndex(of: UInt8(ascii: " ")) else {
            throw OAuthError(.invalidToken, "malformed Authorization header", authenticationScheme: challenge)
        }
        let scheme = authorization[..<space].lowercased()
        let token = authorization[authorization.utf8.index(after: space)...].drop { $0 == " " }
        let tokenHasSpace = token.utf8.withContiguousStorageIfAvailable { $0.contains(UInt8(ascii: " ")) }
            ?? token.utf8.contains(UInt8(ascii: " "))
        guard !token.isEmpty, !tokenHasSpace else {
            throw OAuthError(.invalidToken, "malformed Authorization header", authenticationScheme: challenge)
        }
        guard scheme == "dpop" || scheme == "bearer" else {
            // RFC 6750 §3.1: an unsupported authentication method counts as no authentication.
            throw OAuthError.authenticationRequired("unsupported authorization scheme", scheme: challenge)
        }
        let presentedScheme = scheme == "dpop" ? "DPoP" : "Bearer"
        guard let grant = try storedGrant(tokenHash: Self.tokenHash(token)) else {
            throw OAuthError(.invalidToken, "unknown or expired access token",
                             authenticationScheme: requireDPoP ? "DPoP" : presentedScheme)
        }
        if scheme == "bearer" {
            // RFC 9449 §7.2: a DPoP-bound token sent as a bearer token is refused, as is any
            // bearer token where the server requires DPoP.
            if grant.dpopThumbprint != nil || requireDPoP {
                throw OAuthError(.invalidToken, "this access token must be used with DPoP", authenticationScheme: "DPoP")
            }
            return grant
        }
        guard let jkt = grant.dpopThumbprint else {
            throw OAuthError(.invalidToken, "this access token is not DPoP-bound; use the Bearer scheme",
                             authenticationScheme: "DPoP")
        }
        let proof = try dpop.verify(request.dpop, method: request.method, url: request.url, accessToken: String(token),
                                    nonce: .optional, resource: true)
        guard proof.thumbprint == jkt else {
            throw OAuthError(.invalidToken, "the DPoP proof's key is not the key the token is bound to",
                             authenticationScheme: "DPoP")
        }
        return grant
    }

    /// How tokens are stored and looked up: base64url(SHA-256(token)), behind the token's own
    /// time prefix when it is an ordered identifier. The row is then keyed in creation order
    /// (new rows share the last leaves of the index instead of a random one each) while the
    /// store still holds nothing a client could present: the prefix is public, the rest is the
    /// hash of the whole token. Tokens of earlier versions (43 characters, no prefix) keep
    /// their plain hash.
    public static func tokenHash(_ token: some StringProtocol) -> String {
        let hash = Base64URL.encode(Digest.sha256(Array(token.utf8)))
        guard OAuthIdentifiers.hasOrderedPrefix(token, length: OAuthIdentifiers.orderedPrefixLength + 43) else { return hash }
        return String(token.prefix(OAuthIdentifiers.orderedPrefixLength)) + hash
    }

    private func storedGrant(tokenHash: String) throws(OAuthError) -> AccessGrant? {
        guard let record = try OAuthError.store({ () throws(StoreError) in
            try store.find(issuer: issuer, tokenHash: tokenHash, now: clock.now())
        }) else { return nil }
        return AccessGrant(
            tokenHash: record.tokenHash, clientID: record.clientID, subject: record.persona,
            details: (try? JSONValue.parse(record.grant)) ?? [:], dpopThumbprint: record.dpopJKT, expiresAt: record.expiresAt)
    }
}
