import HTTP
import JSON
import OAuth

extension IssuanceRoutes {
    /// The OpenID4VCI resource endpoints (nonce §7, credential §8, deferred §9, notification
    /// §11) and the admin API over issued credentials. All answers are per client (`no-store`,
    /// no CORS); the access token is checked against the endpoint's public URL (DPoP `htu`).
    func addCredentialRoutes(to router: inout Router<String>) {
        let provider = self.provider

        router.post("/nonce", policy: .perClient) { _, _, _ in
            // §7.2: a fresh c_nonce; a DPoP nonce rides along for the credential request (RFC 9449 §8.2).
            // The body written directly (a c_nonce is base64url; `plainStringObject` checks it):
            // a dictionary serialized cost 3,400 instructions of the request's 26,000 (callgrind).
            let nonce = try provider.issueCNonce()
            let body = JSONValue.plainStringObject([(name: "c_nonce", value: nonce)])
                ?? JSONValue.object(["c_nonce": .string(nonce)]).bytes
            return HTTPResponse(status: .ok, headers: [(name: "Content-Type", value: "application/json"),
                                                       (name: "DPoP-Nonce", value: provider.dpopNonce())], body: body)
        }

        router.post("/credential", policy: .perClient) { _, request, _ in
            let grant = try provider.accessGrant(for: Self.resourceRequest(request, url: provider.urls.credential))
            return Self.render(try provider.credentialResponse(grant: grant, mediaType: request.mediaType, body: request.body))
        }

        router.post("/deferred_credential", policy: .perClient) { _, request, _ in
            let grant = try provider.accessGrant(for: Self.resourceRequest(request, url: provider.urls.deferredCredential))
            return Self.render(try provider.deferredCredentialResponse(grant: grant, mediaType: request.mediaType,
                                                                        body: request.body))
        }

        router.post("/notification", policy: .perClient) { _, request, _ in
            let grant = try provider.accessGrant(for: Self.resourceRequest(request, url: provider.urls.notification))
            try provider.notify(grant: grant, mediaType: request.mediaType, body: request.body)
            return HTTPResponse(status: .noContent)
        }

        router.get("/admin/credentials", policy: .perClient) { _, request, _ in
            try provider.authorizeAdmin(authorization: request.header("authorization"))
            let persona = request.queryValues("persona").first.flatMap { $0.isEmpty ? nil : $0 }
            return .json(PIDProvider.credentialListJSON(try provider.issuedCredentials(persona: persona)))
        }

        router.post("/admin/credentials/{id}/status", policy: .perClient) { _, request, parameters in
            try provider.authorizeAdmin(authorization: request.header("authorization"))
            let status = try PIDProvider.parseStatusChange(try request.jsonBody())
            let record = try provider.setCredentialStatus(id: parameters.require("id"), to: status)
            return .json(PIDProvider.credentialJSON(record))
        }
    }

    static func resourceRequest(_ request: HTTPRequest, url: String) -> ResourceRequest {
        ResourceRequest(authorization: request.header("authorization"), dpop: request.header("dpop"),
                        method: request.method.description, url: url)
    }

    static func render(_ response: CredentialEndpointResponse) -> HTTPResponse {
        HTTPResponse(status: HTTPStatus(code: response.status), headers: [("Content-Type", response.contentType)],
                     body: response.body)
    }
}
