import JOSE
import Store
import Support

/// Where pushed authorization requests are kept until a login uses them, once.
public protocol PushedRequestStore: Sendable {
    func insert(_ request: AuthorizationRequestRecord) throws(StoreError)
    /// The request with this URI, unexpired and unused at `now`.
    func findPending(issuer: String, requestURI: String, now: Int64) throws(StoreError) -> AuthorizationRequestRecord?
    /// Marks the request used; true for exactly one caller, and only while it is unexpired.
    func consume(issuer: String, requestURI: String, now: Int64) throws(StoreError) -> Bool
}

/// The database's `issuance_authorization_requests` table.
extension AuthorizationRequestRepository: PushedRequestStore {}

/// The parameters of a pushed authorization request (RFC 9126 §2.1) that every authorization
/// server checks the same way; what is asked for (`scope`, `authorization_details`, and
/// whatever else a service defines) is the service's to read.
public struct PushedAuthorizationParameters: Sendable, Equatable {
    public var clientID: String
    public var attested: Bool
    public var redirectURI: String
    /// RFC 7636 S256 challenge (base64url of a SHA-256, 43 characters).
    public var codeChallenge: String
    public var state: String?

    public init(clientID: String, attested: Bool, redirectURI: String, codeChallenge: String, state: String?) {
        self.clientID = clientID
        self.attested = attested
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
        self.state = state
    }

    /// Decisions: `request_uri` and `request` are refused inside a PAR; `response_type` must be
    /// `code`; the redirect URI must pass `rule` (RFC 6749 §4.1.2.1: a bad one is answered
    /// here, never redirected to); PKCE S256 is required and `plain` refused.
    /// Throws `OAuthError` or the `ParameterError` of a missing or repeated parameter.
    public static func parse(_ parameters: Parameters, client: ClientIdentity, rule: RedirectURIRule) throws -> Self {
        guard let clientID = client.clientID else { throw OAuthError.invalidClient("client_id is required") }
        for name in ["request_uri", "request"] where !parameters.all(name).isEmpty {
            throw OAuthError.invalidRequest("\(name) is not allowed in a pushed authorization request")
        }
        guard try parameters.single("response_type") == "code" else {
            throw OAuthError(.unsupportedResponseType, "response_type must be code")
        }
        let redirectURI = try parameters.single("redirect_uri")
        _ = try rule.check(redirectURI, clientID: clientID, attested: client.attested)
        guard let method = try parameters.optional("code_challenge_method") else {
            throw OAuthError.invalidRequest("code_challenge_method S256 is required (PKCE)")
        }
        guard method == "S256" else { throw OAuthError.invalidRequest("code_challenge_method must be S256") }
        let challenge = try parameters.single("code_challenge")
        guard PKCE.isValidS256Challenge(challenge) else {
            throw OAuthError.invalidRequest("code_challenge must be a base64url SHA-256 (43 characters)")
        }
        let state = try parameters.optional("state")
        if let state, state.utf8.count > 1024 { throw OAuthError.invalidRequest("state is too long") }
        return Self(clientID: clientID, attested: client.attested, redirectURI: redirectURI, codeChallenge: challenge,
                    state: state)
    }

    /// RFC 9449 §10: the DPoP key a code is to be bound to, from `dpop_jkt` or the PAR's own
    /// proof; both must then name the same key.
    public static func dpopThumbprint(_ parameters: Parameters, proof: DPoPProof?) throws -> String? {
        var jkt = proof?.thumbprint
        if let asked = try parameters.optional("dpop_jkt") {
            if let jkt, jkt != asked { throw OAuthError(.invalidDPoPProof, "dpop_jkt does not match the DPoP proof's key") }
            jkt = asked
        }
        return jkt
    }
}

/// Pushed authorization requests of one authorization server (RFC 9126): stored under a
/// fresh `request_uri` for `lifetime`, read back by the authorization endpoint, used once.
/// The stored `parameters` are JSON the service writes and reads.
public struct PushedAuthorizationRequests: Sendable {
    /// The prefix of every `request_uri` (RFC 9126 §2.2).
    public static let requestURIPrefix = "urn:ietf:params:oauth:request_uri:"

    public let issuer: String
    public let lifetime: Int64
    public let clock: any Clock
    public let store: any PushedRequestStore

    public init(issuer: String, lifetime: Int64, clock: any Clock, store: any PushedRequestStore) {
        self.issuer = issuer
        self.lifetime = lifetime
        self.clock = clock
        self.store = store
    }

    /// Stores a validated request; returns its `request_uri` and lifetime (RFC 9126 §2.2).
    public func push(clientID: String, parameters: String) throws(OAuthError) -> (requestURI: String, expiresIn: Int64) {
        let requestURI = Self.requestURIPrefix + OAuthIdentifiers.ordered()
        let now = clock.now()
        try OAuthError.store { () throws(StoreError) in
            try store.insert(AuthorizationRequestRecord(requestURI: requestURI, issuer: issuer, clientID: clientID,
                                                        parameters: parameters, createdAt: now, expiresAt: now + lifetime))
        }
        return (requestURI, lifetime)
    }

    /// The stored parameters of a pending `request_uri` of `clientID` (RFC 9126 §4: it belongs
    /// to the client that pushed it); `invalid_request_uri` otherwise.
    public func pending(_ requestURI: String, clientID: String) throws(OAuthError) -> String {
        guard requestURI.hasPrefix(Self.requestURIPrefix), let record = try OAuthError.store({ () throws(StoreError) in
            try store.findPending(issuer: issuer, requestURI: requestURI, now: clock.now())
        }) else {
            throw OAuthError(.invalidRequestURI, "unknown, expired or already used request_uri")
        }
        guard record.clientID == clientID else {
            throw OAuthError(.invalidRequestURI, "the request_uri was pushed by another client")
        }
        return record.parameters
    }

    /// Uses the request up: one winner among concurrent logins, `invalid_request_uri` for the rest.
    public func consume(_ requestURI: String) throws(OAuthError) {
        let consumed = try OAuthError.store { () throws(StoreError) in
            try store.consume(issuer: issuer, requestURI: requestURI, now: clock.now())
        }
        guard consumed else { throw OAuthError(.invalidRequestURI, "the request_uri was already used") }
    }
}
