import JSON

/// What a valid access token lets its holder obtain: whose the token is (`subject`, e.g. the
/// persona of a PID), the client it was issued to, the DPoP key it is bound to, and `details`,
/// what the service granted (JSON the service writes and reads; the PID Provider keeps its
/// credential configurations and `credential_identifiers` there).
public struct AccessGrant: Sendable, Equatable {
    /// How the token is stored and looked up (see `AccessTokenService.tokenHash`).
    public let tokenHash: String
    /// nil for an anonymous grant (e.g. a pre-authorized code without `client_id`).
    public let clientID: String?
    public let subject: String
    public let details: JSONValue
    /// RFC 7638 thumbprint of the DPoP key (`cnf.jkt`); nil for a Bearer token.
    public let dpopThumbprint: String?
    public let expiresAt: Int64

    public init(tokenHash: String, clientID: String?, subject: String, details: JSONValue, dpopThumbprint: String?,
                expiresAt: Int64) {
        self.tokenHash = tokenHash
        self.clientID = clientID
        self.subject = subject
        self.details = details
        self.dpopThumbprint = dpopThumbprint
        self.expiresAt = expiresAt
    }
}

/// A request to a protected resource: its `Authorization` and `DPoP` headers, its method, and
/// the endpoint's public URL (the DPoP `htu` must equal it, never a URL built from the
/// request's `Host`).
public struct ResourceRequest: Sendable {
    public var authorization: String?
    public var dpop: String?
    public var method: String
    public var url: String

    public init(authorization: String?, dpop: String?, method: String, url: String) {
        self.authorization = authorization
        self.dpop = dpop
        self.method = method
        self.url = url
    }
}
