import JSON
import OAuth
import Store
import Support

/// A refusal at the authorization endpoint or the login. Before the request (and with it the
/// redirect URI) is known to be valid, `redirectURI` is nil and the user agent gets the error
/// itself; after that, the error goes back to the client by redirect (RFC 6749 §4.1.2.1), with
/// the request's `state` and our `iss` (RFC 9207).
public struct AuthorizationFailure: Error, Sendable {
    public let error: IssuanceError
    public let redirectURI: String?
    public let state: String?

    init(_ error: IssuanceError, redirectURI: String? = nil, state: String? = nil) {
        self.error = error
        self.redirectURI = redirectURI
        self.state = state
    }
}

/// What `/authorize` does next: send the user agent back to the client, or show the login page.
public enum AuthorizationStep: Sendable, Equatable {
    case redirect(String)
    /// The login page: the personas to offer (every one, or the offer's one for `issuer_state`).
    case login(requestURI: String, clientID: String, personas: [Persona])
}

extension PIDProvider {
    /// The prefix of every `request_uri` (RFC 9126 §2.2).
    public static var requestURIPrefix: String { PushedAuthorizationRequests.requestURIPrefix }

    /// PAR (RFC 9126 §2): validates the authorization request and stores it. `client` comes from
    /// the same client authentication as the token endpoint; `dpop` is the PAR's DPoP proof, if
    /// any, to which the code will be bound (RFC 9449 §10). Returns the `request_uri` and its
    /// lifetime in seconds.
    ///
    /// Decisions: PAR is required (`require_pushed_authorization_requests` in the metadata), so
    /// `/authorize` accepts nothing but a `request_uri`; `response_type` must be `code`; PKCE
    /// S256 is required and `plain` refused; `scope` or `authorization_details` (or an
    /// `issuer_state` whose offer names the configurations) must say what is asked for.
    public func pushAuthorizationRequest(_ parameters: Parameters, client: ClientIdentity,
                                         dpop: DPoPProof?) throws(IssuanceError) -> (requestURI: String, expiresIn: Int64) {
        try oauthRequest {
            // The OAuth parameters (client, redirect URI, PKCE, state), checked as every
            // authorization server checks them; then what is asked for, which is OpenID4VCI's.
            let oauthParameters = try PushedAuthorizationParameters.parse(parameters, client: client, rule: redirectURIRule)
            var ids: [String] = []
            var usesDetails = false
            if let details = try parameters.optional("authorization_details") {
                ids = try configurationIDs(authorizationDetails: details)
                usesDetails = true
            }
            if let scope = try parameters.optional("scope") {
                for id in configurationIDs(scope: scope) where !ids.contains(id) { ids.append(id) }
            }
            var offerPersona: String?
            if let issuerState = try parameters.optional("issuer_state") {
                guard let offer = try offer(issuerState: issuerState), offer.grant == .authorizationCode else {
                    throw IssuanceError.invalidRequest("unknown or expired issuer_state")
                }
                offerPersona = offer.personaID
                if ids.isEmpty { ids = offer.credentialConfigurationIDs }
                guard ids.allSatisfy(offer.credentialConfigurationIDs.contains) else {
                    throw IssuanceError(usesDetails ? .invalidAuthorizationDetails : .invalidScope,
                                        "the offer behind issuer_state does not include every requested credential")
                }
            }
            guard !ids.isEmpty else {
                throw IssuanceError(.invalidScope, "name a credential configuration in scope or authorization_details")
            }
            let hint = try parameters.optional("login_hint")
            let jkt = try PushedAuthorizationParameters.dpopThumbprint(parameters, proof: dpop)
            let request = AuthorizationRequest(
                clientID: oauthParameters.clientID, attested: oauthParameters.attested, redirectURI: oauthParameters.redirectURI,
                codeChallenge: oauthParameters.codeChallenge, state: oauthParameters.state, credentialConfigurationIDs: ids,
                usesAuthorizationDetails: usesDetails, loginHint: hint, offerPersonaID: offerPersona, dpopJKT: jkt)
            return try oauth { () throws(OAuthError) in
                try pushedRequests.push(clientID: oauthParameters.clientID, parameters: request.json.serialized())
            }
        }
    }

    /// The authorization endpoint (RFC 6749 §4.1.1 with RFC 9126 §4): `client_id` and a pushed
    /// `request_uri` of that client, unused and unexpired. With `login_hint` (here or in the
    /// PAR) naming a persona, the login is done at once; otherwise the login page is shown.
    /// Either way the code can only go to a redirect URI `redirectURIRule` allows this client
    /// today (`pendingRequest` checks it again), so `login_hint` skips the login only for an
    /// attested client, a registered one or a loopback redirect.
    public func authorize(_ parameters: Parameters) throws(AuthorizationFailure) -> AuthorizationStep {
        let clientID: String, requestURI: String
        do throws(ParameterError) {
            clientID = try parameters.single("client_id")
            requestURI = try parameters.single("request_uri")
        } catch {
            throw AuthorizationFailure(.invalidRequest("\(error); this server requires pushed authorization requests"))
        }
        let request = try pendingRequest(requestURI, clientID: clientID)
        let hint: String?
        do throws(ParameterError) { hint = try parameters.optional("login_hint") ?? request.loginHint } catch {
            throw AuthorizationFailure(.invalidRequest("\(error)"), redirectURI: request.redirectURI, state: request.state)
        }
        let personas = loginPersonas(request)
        if let hint {
            guard personas.contains(where: { $0.id == hint }) else {
                throw AuthorizationFailure(IssuanceError(.accessDenied, "login_hint names no persona that may log in here"),
                                           redirectURI: request.redirectURI, state: request.state)
            }
            return .redirect(try completeLogin(requestURI: requestURI, request: request, personaID: hint))
        }
        return .login(requestURI: requestURI, clientID: clientID, personas: personas)
    }

    /// The login page's form post: the person picked `personaID` for the pending request.
    /// Returns the redirect to the client with `code`, `state` and `iss` (RFC 9207).
    public func login(requestURI: String, clientID: String, personaID: String) throws(AuthorizationFailure) -> String {
        let request = try pendingRequest(requestURI, clientID: clientID)
        guard loginPersonas(request).contains(where: { $0.id == personaID }) else {
            throw AuthorizationFailure(IssuanceError(.accessDenied, "that persona may not log in here"),
                                       redirectURI: request.redirectURI, state: request.state)
        }
        return try completeLogin(requestURI: requestURI, request: request, personaID: personaID)
    }

    /// The personas a person may log in as: the offer's one when `issuer_state` tied the
    /// request to an offer, else every persona.
    func loginPersonas(_ request: AuthorizationRequest) -> [Persona] {
        guard let id = request.offerPersonaID else { return configuration.personas }
        return configuration.personas.filter { $0.id == id }
    }

    private func pendingRequest(_ requestURI: String, clientID: String) throws(AuthorizationFailure) -> AuthorizationRequest {
        do throws(IssuanceError) {
            let parameters = try oauth { () throws(OAuthError) in try pushedRequests.pending(requestURI, clientID: clientID) }
            let request = try AuthorizationRequest(json: parameters)
            // The rule again, as it stands now: the configuration may have changed since the
            // PAR (a client unregistered), and a refused URI must not get even an error redirect.
            _ = try oauth { () throws(OAuthError) in
                try redirectURIRule.check(request.redirectURI, clientID: request.clientID, attested: request.attested)
            }
            return request
        } catch {
            throw AuthorizationFailure(error)
        }
    }

    /// Uses the request_uri up (one winner among concurrent logins) and issues the code.
    private func completeLogin(requestURI: String, request: AuthorizationRequest,
                               personaID: String) throws(AuthorizationFailure) -> String {
        do throws(IssuanceError) {
            try oauth { () throws(OAuthError) in try pushedRequests.consume(requestURI) }
            var granted = request
            granted.personaID = personaID
            let code = try oauth { () throws(OAuthError) in try codes.issue(clientID: request.clientID, grant: granted.json) }
            var query = [("code", code)]
            if let state = request.state { query.append(("state", state)) }
            query.append(("iss", issuer))
            return URLEncoding.appendingQuery(query, to: request.redirectURI)
        } catch {
            // A used request_uri is not redirected: a replayed link must not reach the client.
            if error.codeValue == .invalidRequestURI { throw AuthorizationFailure(error) }
            throw AuthorizationFailure(error, redirectURI: request.redirectURI, state: request.state)
        }
    }
}
