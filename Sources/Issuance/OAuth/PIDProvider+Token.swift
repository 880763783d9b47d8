import JSON
import Store
import Support

extension PIDProvider {
    /// The pre-authorized code grant type (OpenID4VCI §3.5).
    public static let preAuthorizedGrantType = "urn:ietf:params:oauth:grant-type:pre-authorized_code"

    /// The token endpoint (RFC 6749 §4.1.3, OpenID4VCI §6): the `authorization_code` and
    /// pre-authorized code grants. `client` comes from `authenticateClient`, `dpop` from
    /// `verifyDPoPProof` (nil when the request carried none; refused when DPoP is required).
    /// Returns the token response body (§6.2).
    ///
    /// `credential_identifiers`: one per configuration, a fresh random value (not the
    /// configuration id), so a wallet that mixes up the two fails visibly; they are returned
    /// only when the request named its credentials with `authorization_details`.
    public func tokenResponse(_ parameters: Parameters, client: ClientIdentity, dpop: DPoPProof?) throws(IssuanceError) -> JSONValue {
        try splicedTokenResponse(parameters, client: client, dpop: dpop).value
    }

    /// `tokenResponse` serialized (its `bytes`), with the claims preview's JSON text copied in
    /// (see SplicedJSON): what the token endpoint sends.
    public func tokenResponseBytes(_ parameters: Parameters, client: ClientIdentity, dpop: DPoPProof?) throws(IssuanceError) -> [UInt8] {
        try splicedTokenResponse(parameters, client: client, dpop: dpop).bytes
    }

    private func splicedTokenResponse(_ parameters: Parameters, client: ClientIdentity,
                                      dpop: DPoPProof?) throws(IssuanceError) -> SplicedJSON {
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
                                        dpop: DPoPProof?) throws -> SplicedJSON {
        let code = try parameters.single("code")
        let redirectURI = try parameters.single("redirect_uri")
        let verifier = try parameters.single("code_verifier")
        guard let clientID = client.clientID else { throw IssuanceError(.invalidClient, "client_id is required") }
        let outcome = try withOAuthStore { () throws(StoreError) in
            try CodeRepository(database: database).redeem(issuer: issuer, code: code, now: clock.now())
        }
        let record: CodeRecord
        switch outcome {
        case .redeemed(let r): record = r
        case .unknown: throw IssuanceError.invalidGrant("unknown authorization code")
        case .expired: throw IssuanceError.invalidGrant("the authorization code has expired")
        case .alreadyUsed: throw IssuanceError.invalidGrant("the authorization code was already used")
        }
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
                                        dpop: DPoPProof?) throws -> SplicedJSON {
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
            let (token, grant, record) = newAccessToken(
                clientID: client.clientID, personaID: offer.personaID, credentialConfigurationIDs: ids,
                credentialIdentifiers: identifiers, dpopThumbprint: dpop?.thumbprint)
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
    /// the `credential_previews` extension (see the README).
    private func tokenBody(clientID: String?, personaID: String, configurationIDs ids: [String], withIdentifiers: Bool,
                           dpop: DPoPProof?) throws(IssuanceError) -> SplicedJSON {
        let (identifiers, details) = credentialIdentifiers(for: ids, wanted: withIdentifiers)
        let (token, grant) = try issueAccessToken(
            clientID: clientID, personaID: personaID, credentialConfigurationIDs: ids, credentialIdentifiers: identifiers,
            dpopThumbprint: dpop?.thumbprint)
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

    private func tokenResponseBody(token: String, grant: AccessGrant, details: [JSONValue]?, dpop: DPoPProof?) -> SplicedJSON {
        var body: [String: JSONValue] = [
            "access_token": .string(token),
            "token_type": dpop == nil ? "Bearer" : "DPoP",
            "expires_in": .int(grant.expiresAt - clock.now()),
        ]
        if let details { body["authorization_details"] = .array(details) }
        guard configuration.tokenClaimsPreview, let persona = configuration.persona(id: grant.personaID) else {
            return SplicedJSON(fragments: []) { _ in .object(body) }
        }
        let issuedAt = clock.now()
        let previews = grant.credentialConfigurationIDs.compactMap { id -> (id: String, format: String, claims: SplicedJSON.Fragment)? in
            guard let c = configuration.configuration(id: id) else { return nil }
            return (id, c.format.rawValue, credentialClaimsFragment(for: persona, configuration: c, issuedAt: issuedAt,
                                                                    expiresAt: issuedAt + configuration.credentialLifetime))
        }
        return SplicedJSON(fragments: previews.map(\.claims)) { claims in
            var body = body
            body["credential_previews"] = .array(zip(previews, claims).map { preview, claims in
                ["credential_configuration_id": .string(preview.id), "format": .string(preview.format), "claims": claims]
            })
            return .object(body)
        }
    }
}
