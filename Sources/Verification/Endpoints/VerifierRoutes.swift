import HTTP
import JSON
import Store
import Support

/// The verifier's routes, mounted at its entity ID beside the federation's. Handlers parse,
/// call the verifier, render; every answer is per client (`no-store`) but the root certificate.
public struct VerifierRoutes: Sendable {
    public let verifier: Verifier
    /// Apple's identity envelope endpoints (`services.verifier.apple`), when configured.
    public var apple: AppleIdentityService?

    public init(verifier: Verifier, apple: AppleIdentityService? = nil) {
        self.verifier = verifier
        self.apple = apple
    }

    /// The media type of a request object by reference (RFC 9101 §10.2, OpenID4VP 1.0 §5.10).
    static let requestObjectMediaType = "application/oauth-authz-req+jwt"

    public func router() -> Router<String> {
        var router = Router<String>()
        let verifier = self.verifier

        // §5.10: the wallet dereferences request_uri with GET ...
        router.get("/request/{id}", policy: .perClient) { _, _, parameters in
            .jwt(try verifier.requestObject(id: parameters.require("id")), contentType: Self.requestObjectMediaType)
        }
        // ... or, with request_uri_method=post (§5.10.1), POSTs its wallet_metadata and a
        // wallet_nonce the request object then echoes.
        router.post("/request/{id}", policy: .perClient) { _, request, parameters in
            let form = try request.formBody()
            let nonce = form.all("wallet_nonce")
            guard nonce.count <= 1, form.all("wallet_metadata").count <= 1 else {
                throw VerificationError.invalidRequest("wallet_nonce and wallet_metadata may appear once each")
            }
            if let metadata = form.all("wallet_metadata").first {
                guard (try? JSONValue.parse(Array(metadata.utf8)))?.objectValue != nil else {
                    throw VerificationError.invalidRequest("wallet_metadata must be a JSON object (§5.10.1)")
                }
            }
            return .jwt(try verifier.requestObject(id: parameters.require("id"), walletNonce: nonce.first),
                        contentType: Self.requestObjectMediaType)
        }

        // §8.2: the wallet posts the response (form-encoded; direct_post.jwt: one `response`).
        router.post("/response", policy: .perClient) { _, request, _ in
            guard let form = request.formParameters() else {
                throw VerificationError.invalidRequest("the response is application/x-www-form-urlencoded (§8.2)")
            }
            return .json(try verifier.receiveResponse(form: form).json)
        }

        router.post("/admin/presentation-requests", policy: .perClient) { _, request, _ in
            try verifier.authorizeAdmin(authorization: request.header("authorization"))
            let record = try verifier.createRequest(PresentationRequestOptions.parse(try request.jsonBody()))
            var response = HTTPResponse.json(Self.createdBody(verifier, record), status: .created)
            response.headers.append((name: "Location", value: verifier.urls.adminRequest(record.id)))
            return response
        }
        router.get("/admin/presentation-requests/{id}", policy: .perClient) { _, request, parameters in
            try verifier.authorizeAdmin(authorization: request.header("authorization"))
            guard let record = try verifier.request(id: parameters.require("id")) else {
                throw VerificationError.notFound("no such presentation request")
            }
            return .json(verifier.requestResult(record))
        }

        let ca = HTTPResponse(status: .ok, headers: [("Content-Type", "application/x-pem-file")],
                              body: Array(verifier.keys.ca.pem().utf8)).applying(.publicRead).prepared()
        router.get("/verifier-ca.pem", memo: true) { _, _, _ in ca }
        addPageRoutes(to: &router)
        if let apple { Self.addAppleRoutes(apple, to: &router) }
        Self.addPixelPassRoutes(verifier, to: &router)
        return router
    }

    /// `{"id", "request_link", "request_uri", "client_id", "response_mode"}` of a new request.
    static func createdBody(_ verifier: Verifier, _ record: PresentationRequestRecord) -> JSONValue {
        [
            "id": .string(record.id),
            "request_link": .string(verifier.requestLink(record)),
            "request_uri": .string(verifier.urls.request(record.id)),
            "client_id": .string(record.clientID),
            "response_mode": .string(record.responseMode),
            "expires_at": .int(record.expiresAt),
        ]
    }
}
