/// What a valid access token lets its holder obtain: the persona whose PID it is, the
/// credential configurations granted (and, when the token request used
/// `authorization_details`, the `credential_identifiers` issued for them), and the DPoP key
/// the token is bound to.
public struct AccessGrant: Sendable, Equatable {
    public let tokenHash: String
    /// nil for an anonymous pre-authorized code grant.
    public let clientID: String?
    public let personaID: String
    public let credentialConfigurationIDs: [String]
    /// `credential_identifier` → the configuration it stands for (OpenID4VCI §6.2).
    public let credentialIdentifiers: [String: String]
    /// RFC 7638 thumbprint of the DPoP key (`cnf.jkt`); nil for a Bearer token.
    public let dpopThumbprint: String?
    public let expiresAt: Int64

    public init(tokenHash: String, clientID: String?, personaID: String, credentialConfigurationIDs: [String],
                credentialIdentifiers: [String: String], dpopThumbprint: String?, expiresAt: Int64) {
        self.tokenHash = tokenHash
        self.clientID = clientID
        self.personaID = personaID
        self.credentialConfigurationIDs = credentialConfigurationIDs
        self.credentialIdentifiers = credentialIdentifiers
        self.dpopThumbprint = dpopThumbprint
        self.expiresAt = expiresAt
    }
}

/// A request to a protected resource (credential, deferred credential, notification): its
/// `Authorization` and `DPoP` headers, its method, and the endpoint's public URL (the DPoP
/// `htu` must equal it, never a URL built from the request's `Host`).
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
