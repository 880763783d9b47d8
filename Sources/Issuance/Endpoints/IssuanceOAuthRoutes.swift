import HTTP
import JSON
import OAuth
import Support

extension IssuanceRoutes {
    /// The authorization server: PAR (RFC 9126), the authorization endpoint and the mock login,
    /// and the token endpoint. Every URL a check uses (`htu`, `aud`) is the provider's public
    /// URL, never one built from the request. Answers to clients are `no-store`; the pages get
    /// the HTML policy.
    func addOAuthRoutes(to router: inout Router<String>) {
        let provider = self.provider

        // RFC 9126 §2: the same client authentication as the token endpoint; a DPoP proof, when
        // sent, binds the code to its key (RFC 9449 §10). 201 with the request_uri (§2.2).
        router.post("/par", policy: .perClient) { _, request, _ in
            let form = try Self.oauthForm(request)
            let dpop = try request.header("dpop").map { proof in
                try provider.verifyDPoPProof(proof, method: "POST", url: provider.urls.pushedAuthorizationRequest, nonce: .optional)
            }
            let client = try Self.authenticatedClient(provider, request, form)
            let (requestURI, expiresIn) = try provider.pushAuthorizationRequest(form, client: client, dpop: dpop)
            return HTTPResponse.json(["request_uri": .string(requestURI), "expires_in": .int(expiresIn)], status: .created)
        }

        router.get("/authorize", policy: .html) { _, request, _ in
            do throws(AuthorizationFailure) {
                switch try provider.authorize(request.parameters) {
                case .redirect(let target):
                    return .redirect(to: target)
                case .login(let requestURI, let clientID, let personas):
                    return .html(provider.loginPage(requestURI: requestURI, clientID: clientID, personas: personas))
                }
            } catch {
                throw Self.rendered(error, provider, status: .found)
            }
        }

        // The login form's post; 303 so the browser follows to the client with a GET.
        router.post("/login", policy: .html) { _, request, _ in
            let form = try Self.oauthForm(request)
            let requestURI = try form.single("request_uri")
            let clientID = try form.single("client_id")
            let persona = try form.optional("persona") ?? ""
            do throws(AuthorizationFailure) {
                return .redirect(to: try provider.login(requestURI: requestURI, clientID: clientID, personaID: persona),
                                 status: .seeOther)
            } catch {
                throw Self.rendered(error, provider, status: .seeOther)
            }
        }

        // RFC 6749 §3.2 and OpenID4VCI §6. The DPoP proof is checked before the client's PoP,
        // so a `use_dpop_nonce` round trip does not spend the PoP's jti (RFC 9449 §8: the
        // token endpoint requires a server nonce, handed out in `DPoP-Nonce`).
        router.post("/token", policy: .perClient) { _, request, _ in
            let form = try Self.oauthForm(request)
            let dpop = try request.header("dpop").map { proof in
                try provider.verifyDPoPProof(proof, method: "POST", url: provider.urls.token, nonce: .required)
            }
            let client = try Self.authenticatedClient(provider, request, form)
            let body = try provider.tokenResponse(form, client: client, dpop: dpop)
            let response = HTTPResponse(status: .ok, headers: [(name: "Content-Type", value: "application/json")], body: body)
            // A fresh nonce with every DPoP answer saves the wallet a round trip next time (§8.2).
            return dpop == nil ? response : response.adding(header: "DPoP-Nonce", provider.dpopNonce())
        }
    }

    private static func authenticatedClient(_ provider: PIDProvider, _ request: HTTPRequest,
                                            _ form: Parameters) throws -> ClientIdentity {
        try provider.authenticateClient(
            attestation: request.header("oauth-client-attestation"), pop: request.header("oauth-client-attestation-pop"),
            clientID: try form.optional("client_id"))
    }

    /// Before the redirect URI is trusted the user agent gets the error itself (JSON 400);
    /// after, the client gets it by redirect with `state` and `iss` (RFC 6749 §4.1.2.1, RFC 9207).
    private static func rendered(_ failure: AuthorizationFailure, _ provider: PIDProvider, status: HTTPStatus) -> any Error {
        guard let target = failure.redirectURI else { return failure.error }
        return RedirectedError(failure.error, target: target, state: failure.state, issuer: provider.issuer, status: status)
    }

    /// The form body of an OAuth endpoint. RFC 6749 §5.2 answers every malformed request,
    /// a wrong Content-Type included, with 400 `invalid_request` (the HTTP layer's default for a
    /// wrong media type is 415).
    static func oauthForm(_ request: HTTPRequest) throws(IssuanceError) -> Parameters {
        do { return try request.formBody() } catch { throw IssuanceError.invalidRequest(error.errorDescription) }
    }
}
