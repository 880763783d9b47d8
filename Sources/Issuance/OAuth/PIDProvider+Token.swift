import JSON
import OAuth
import Store
import Support

extension PIDProvider {
    /// The pre-authorized code grant type (OpenID4VCI §3.5).
    public static let preAuthorizedGrantType = "urn:ietf:params:oauth:grant-type:pre-authorized_code"

    /// The token endpoint (RFC 6749 §4.1.3, OpenID4VCI §6): the `authorization_code` and
    /// pre-authorized code grants. `client` comes from `authenticateClient`, `dpop` from
    /// `verifyDPoPProof` (nil when the request carried none; refused when DPoP is required).
    /// Returns the token response body (§6.2), as sent.
    ///
    /// `credential_identifiers`: one per configuration, a fresh random value (not the
    /// configuration id), so a wallet that mixes up the two fails visibly; they are returned
    /// only when the request named its credentials with `authorization_details`.
    public func tokenResponse(_ parameters: Parameters, client: ClientIdentity, dpop: DPoPProof?) throws(IssuanceError) -> [UInt8] {
        try splicedTokenResponse(parameters, client: client, dpop: dpop).bytes
    }

    private func splicedTokenResponse(_ parameters: Parameters, client: ClientIdentity,
                                      dpop: DPoPProof?) throws(IssuanceError) -> TokenResponseBody {
        if configuration.requireDPoP && dpop == nil {
            // With a nonce, so the client's next attempt can succeed (RFC 9449 §8).
            throw IssuanceError(.invalidDPoPProof, "a DPoP proof is required", dpopNonce: dpopNonce())
        }
        return try oauthRequest {
            switch try parameters.single("grant_type") {
            case "authorization_code":
                return try authorizationCodeGrant(parameters, client: client, dpop: dpop)
            case Self.preAuthorizedGrantType:
                return try preAuthorizedCodeGrant(parameters, client: client, dpop: dpop)
            default:
                throw IssuanceError(.unsupportedGrantType, "grant_type must be authorization_code or \(Self.preAuthorizedGrantType)")
            }
        }
    }

    /// RFC 6749 §4.1.3 with RFC 7636 §4.6: the code is burnt first (single use even when the
    /// rest fails), then checked: same client, same `redirect_uri`, the verifier hashes to the
    /// challenge, and the DPoP key is the one the code was bound to at PAR (RFC 9449 §10).
    private func authorizationCodeGrant(_ parameters: Parameters, client: ClientIdentity,
                                        dpop: DPoPProof?) throws -> TokenResponseBody {
        let code = try parameters.single("code")
        let redirectURI = try parameters.single("redirect_uri")
        let verifier = try parameters.single("code_verifier")
        guard let clientID = client.clientID else { throw IssuanceError(.invalidClient, "client_id is required") }
        let record = try oauth { () throws(OAuthError) in try codes.redeem(code) }
        let request = try AuthorizationRequest(json: record.grant)
        guard record.clientID == clientID else { throw IssuanceError.invalidGrant("the code was issued to another client") }
        if request.attested && !client.attested {
            throw IssuanceError(.invalidClient, "the code was issued to an attested client: send its attestation")
        }
        guard request.redirectURI == redirectURI else { throw IssuanceError.invalidGrant("redirect_uri does not match") }
        guard PKCE.verify(verifier: verifier, challenge: request.codeChallenge) else {
            throw IssuanceError.invalidGrant("code_verifier does not match the code_challenge")
        }
        if let jkt = request.dpopJKT, dpop?.thumbprint != jkt {
            throw IssuanceError(.invalidDPoPProof, "the DPoP key is not the one the authorization request was bound to")
        }
        guard let personaID = request.personaID, configuration.persona(id: personaID) != nil else {
            throw IssuanceError.invalidGrant("the code's persona no longer exists")
        }
        return try tokenBody(clientID: clientID, personaID: personaID, configurationIDs: request.credentialConfigurationIDs,
                             withIdentifiers: request.usesAuthorizationDetails, dpop: dpop)
    }

    /// OpenID4VCI §6.1: `pre-authorized_code` and, when the offer asked for one, `tx_code`
    /// (redeemed through the offers, which count wrong tx_codes). Anonymous unless attestation
    /// is required (the client check already refused a missing one). `authorization_details`
    /// may narrow the offer's configurations and asks for `credential_identifiers`.
    ///
    /// The access token is stored in the transaction that redeems the code: one commit per
    /// token request instead of two. A refusal found after the redemption (the details ask for
    /// more than the offer) stores no token but still burns the code, as before.
    private func preAuthorizedCodeGrant(_ parameters: Parameters, client: ClientIdentity,
                                        dpop: DPoPProof?) throws -> TokenResponseBody {
        let code = try parameters.single("pre-authorized_code")
        let txCode = try parameters.optional("tx_code")
        let details = try parameters.optional("authorization_details")
        let requested = try details.map { text throws(IssuanceError) in try configurationIDs(authorizationDetails: text) }
        let (_, issued) = try redeemPreAuthorizedCode(code, txCode: txCode) {
            offer, db throws(StoreError) -> (token: String, grant: AccessGrant, details: [JSONValue])? in
            var ids = offer.credentialConfigurationIDs
            if let requested {
                guard requested.allSatisfy(offer.credentialConfigurationIDs.contains) else { return nil }
                ids = requested
            }
            let (identifiers, details) = credentialIdentifiers(for: ids, wanted: requested != nil)
            let (token, grant, record) = accessTokens.mint(
                clientID: client.clientID, subject: offer.personaID,
                details: AccessGrant.details(credentialConfigurationIDs: ids, credentialIdentifiers: identifiers),
                dpopThumbprint: dpop?.thumbprint)
            try TokenRepository(database: db).insert(record)
            return (token, grant, details)
        }
        guard let issued else {
            throw IssuanceError(.invalidAuthorizationDetails, "the offer does not include every requested credential")
        }
        return tokenResponseBody(token: issued.token, grant: issued.grant, details: requested != nil ? issued.details : nil,
                                 dpop: dpop)
    }

    /// §6.2: `access_token`, `token_type` (DPoP when bound, RFC 9449 §5), `expires_in`,
    /// `authorization_details` with `credential_identifiers`, and with `token_claims_preview`
    /// the `credential_previews` extension (docs/pid-provider.md).
    private func tokenBody(clientID: String?, personaID: String, configurationIDs ids: [String], withIdentifiers: Bool,
                           dpop: DPoPProof?) throws(IssuanceError) -> TokenResponseBody {
        let (identifiers, details) = credentialIdentifiers(for: ids, wanted: withIdentifiers)
        let (token, grant) = try oauth { () throws(OAuthError) in
            try accessTokens.issue(
                clientID: clientID, subject: personaID,
                details: AccessGrant.details(credentialConfigurationIDs: ids, credentialIdentifiers: identifiers),
                dpopThumbprint: dpop?.thumbprint)
        }
        return tokenResponseBody(token: token, grant: grant, details: withIdentifiers ? details : nil, dpop: dpop)
    }

    /// `credential_identifiers`: one per configuration, a fresh random value (not the
    /// configuration id), and the `authorization_details` entries that carry them; none when
    /// the request did not name its credentials with `authorization_details`.
    private func credentialIdentifiers(for ids: [String], wanted: Bool) -> (identifiers: [String: String], details: [JSONValue]) {
        guard wanted else { return ([:], []) }
        var identifiers: [String: String] = [:]
        var details: [JSONValue] = []
        for id in ids {
            let identifier = Self.randomToken(bytes: 16)
            identifiers[identifier] = id
            details.append(["type": "openid_credential", "credential_configuration_id": .string(id),
                            "credential_identifiers": [.string(identifier)]])
        }
        return (identifiers, details)
    }

    private func tokenResponseBody(token: String, grant: AccessGrant, details: [JSONValue]?,
                                   dpop: DPoPProof?) -> TokenResponseBody {
        var body = TokenResponseBody(accessToken: token, tokenType: dpop == nil ? "Bearer" : "DPoP",
                                     expiresIn: grant.expiresAt - clock.now(), authorizationDetails: details)
        guard configuration.tokenClaimsPreview != .off, let persona = configuration.persona(id: grant.personaID) else {
            return body
        }
        let issuedAt = clock.now()
        let configurations = grant.credentialConfigurationIDs.compactMap { configuration.configuration(id: $0) }
        switch configuration.tokenClaimsPreview {
        case .off:
            break
        case .claims:
            body.previews = .claims(configurations.map { c in
                TokenResponseBody.Preview(
                    configurationID: c.id, format: c.format.rawValue,
                    claims: credentialClaimsFragment(for: persona, configuration: c, issuedAt: issuedAt,
                                                     expiresAt: issuedAt + configuration.credentialLifetime))
            })
        case .nl:
            body.previews = .nl(configurations.map { c in
                nlCredentialPreview(for: persona, configuration: c, issuedAt: issuedAt).fragment
            })
        }
        return body
    }
}

/// The token response (OpenID4VCI §6.2), written once through the JSON writer with members in
/// sorted order (the bytes `JSONValue` would give). It is sent on every issuance, and each
/// preview's claims (kilobytes, a portrait among them) are copied from their text, serialized
/// once per persona, configuration and day, rather than built and serialized for every token.
struct TokenResponseBody {
    /// One entry of `credential_previews` in Trustbed's own form (docs/pid-provider.md).
    struct Preview {
        let configurationID: String
        let format: String
        let claims: JSONFragment
    }

    let accessToken: String
    let tokenType: String
    let expiresIn: Int64
    /// With `credential_identifiers`; nil when the request did not use `authorization_details`.
    let authorizationDetails: [JSONValue]?
    /// `credential_previews` in the configured form (`token_claims_preview`); nil without it.
    var previews: Previews?

    enum Previews {
        case claims([Preview])
        /// Each entry one `NLCredentialPreview`, already serialized.
        case nl([JSONFragment])

        var textSize: Int {
            switch self {
            case .claims(let previews): previews.reduce(0) { $0 + $1.claims.text.count + 128 }
            case .nl(let previews): previews.reduce(0) { $0 + $1.text.count }
            }
        }
    }

    init(accessToken: String, tokenType: String, expiresIn: Int64, authorizationDetails: [JSONValue]?) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.authorizationDetails = authorizationDetails
    }

    var bytes: [UInt8] {
        var out = JSONWriter(capacity: 256 + (previews?.textSize ?? 0))
        out.openObject()
        // Sorted by key: access_token < authorization_details < credential_previews < expires_in < token_type.
        out.member("access_token", accessToken)
        if let authorizationDetails { out.member("authorization_details", .array(authorizationDetails)) }
        switch previews {
        case nil:
            break
        case .claims(let previews):
            out.name("credential_previews")
            out.openArray()
            for preview in previews {
                out.openObject()
                out.member("claims", preview.claims)
                out.member("credential_configuration_id", preview.configurationID)
                out.member("format", preview.format)
                out.closeObject()
            }
            out.closeArray()
        case .nl(let previews):
            out.name("credential_previews")
            out.openArray()
            for preview in previews { out.fragment(preview) }
            out.closeArray()
        }
        out.member("expires_in", expiresIn)
        out.member("token_type", tokenType)
        out.closeObject()
        return out.bytes
    }
}
