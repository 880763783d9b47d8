import Cryptography
import JSON
import OAuth
import Store
import Support

/// The authorization server's calls as the PID Provider's endpoints make them: each runs the
/// `OAuth` value type and turns its `OAuthError` into the `IssuanceError` the endpoints render.
extension PIDProvider {
    static let cNoncePurpose = "c_nonce"

    /// Runs an `OAuth` call; its error becomes an `IssuanceError` (a store failure is logged,
    /// without the SQL detail reaching the client).
    func oauth<T>(_ body: () throws(OAuthError) -> T) throws(IssuanceError) -> T {
        do throws(OAuthError) {
            return try body()
        } catch {
            if let cause = error.cause { logger.error("OAuth store failure: \(cause)") }
            throw IssuanceError(error)
        }
    }

    /// RFC 9449 §4.3 (see `DPoPVerifier.verify`).
    public func verifyDPoPProof(_ proof: String?, method: String, url: String, accessToken: String? = nil,
                                nonce policy: DPoPNoncePolicy, resource: Bool = false) throws(IssuanceError) -> DPoPProof {
        try oauth { () throws(OAuthError) in
            try dpop.verify(proof, method: method, url: url, accessToken: accessToken, nonce: policy, resource: resource)
        }
    }

    /// The current `DPoP-Nonce` (RFC 9449 §8).
    public func dpopNonce() -> String { dpop.nonces.current() }

    /// Client authentication at PAR and the token endpoint (see `ClientAttestationVerifier`).
    public func authenticateClient(attestation: String?, pop: String?, clientID: String?) throws(IssuanceError) -> ClientIdentity {
        try oauth { () throws(OAuthError) in try clientAttestations.authenticate(attestation: attestation, pop: pop, clientID: clientID) }
    }

    /// The protected-resource check of the credential, deferred credential and notification
    /// endpoints (see `AccessTokenService.grant(for:)`).
    public func accessGrant(for request: ResourceRequest) throws(IssuanceError) -> AccessGrant {
        try oauth { () throws(OAuthError) in try accessTokens.grant(for: request) }
    }

    // MARK: c_nonce (OpenID4VCI 1.0 §7.2)

    /// A fresh `c_nonce` (see `SingleUseNonces`).
    public func issueCNonce() throws(IssuanceError) -> String { cNonces.issue() }

    /// Consumes a `c_nonce` in a transaction of its own: true for exactly one caller, while it
    /// is unexpired.
    public func consumeCNonce(_ nonce: String) throws(IssuanceError) -> Bool {
        try inCredentialTransaction { db in try consumeCNonce(nonce, in: db) }
    }

    /// Consumes a `c_nonce` inside `db`'s transaction, so its use commits with the issuance.
    func consumeCNonce(_ nonce: String, in db: Database) throws(StoreError) -> Bool {
        try cNonces.consume(nonce, in: NonceRepository(database: db))
    }

    /// The issue time of a valid `c_nonce` of this issuer, nil otherwise.
    func cNonceTime(_ nonce: String, now: Int64) -> Int64? { cNonces.issueTime(of: nonce, now: now) }

    func cNonceMAC(_ body: [UInt8]) -> [UInt8] { cNonces.mac(body) }

    // MARK: Request bodies

    /// Runs the body of an OAuth endpoint: a refused parameter is 400 `invalid_request`
    /// (RFC 6749 §5.2), an `OAuthError` becomes its `IssuanceError`, an `IssuanceError` stays
    /// as it is, anything else is ours (500).
    func oauthRequest<T>(_ body: () throws -> T) throws(IssuanceError) -> T {
        do {
            return try body()
        } catch let error as ParameterError {
            throw .invalidRequest(error.description)
        } catch let error as OAuthError {
            if let cause = error.cause { logger.error("OAuth store failure: \(cause)") }
            throw IssuanceError(error)
        } catch let error as IssuanceError {
            throw error
        } catch {
            throw .serverError("\(error)")
        }
    }
}

/// What the PID Provider grants with an access token, kept in the grant's `details`: the
/// credential configurations and, when the token request used `authorization_details`, the
/// `credential_identifiers` issued for them (OpenID4VCI §6.2). The `subject` is the persona.
extension AccessGrant {
    public init(tokenHash: String, clientID: String?, personaID: String, credentialConfigurationIDs: [String],
                credentialIdentifiers: [String: String], dpopThumbprint: String?, expiresAt: Int64) {
        self.init(tokenHash: tokenHash, clientID: clientID, subject: personaID,
                  details: Self.details(credentialConfigurationIDs: credentialConfigurationIDs,
                                        credentialIdentifiers: credentialIdentifiers),
                  dpopThumbprint: dpopThumbprint, expiresAt: expiresAt)
    }

    /// The stored form (as earlier versions stored it, so their tokens stay readable).
    static func details(credentialConfigurationIDs: [String], credentialIdentifiers: [String: String]) -> JSONValue {
        ["credential_configuration_ids": JSONValue(credentialConfigurationIDs),
         "credential_identifiers": .object(credentialIdentifiers.mapValues(JSONValue.string))]
    }

    /// The persona whose PID the token is for.
    public var personaID: String { subject }

    public var credentialConfigurationIDs: [String] { details["credential_configuration_ids"]?.stringArray ?? [] }

    /// `credential_identifier` → the configuration it stands for (OpenID4VCI §6.2).
    public var credentialIdentifiers: [String: String] {
        var identifiers: [String: String] = [:]
        for (id, value) in details["credential_identifiers"]?.objectValue ?? [:] { identifiers[id] = value.stringValue }
        return identifiers
    }
}
