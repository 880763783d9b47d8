import HTTP
import JSON
import Store
import Support

extension WalletProviderRoutes {
    /// The jwt-bearer grant of `<wp>/token` (RFC 7523 §2.1), the older IT-Wallet wire format.
    static let jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    /// Item 6, first wire format: `POST <wp>/token` with form `grant_type=<jwt-bearer>&
    /// assertion=<war+jwt>` answers the wallet attestation as `application/jwt`.
    func addAttestationRoutes(to router: inout Router<String>) {
        let provider = self.provider
        router.post("/token", policy: .perClient) { _, request, _ in
            guard request.mediaType == "application/x-www-form-urlencoded" else {
                throw WalletProviderError.badRequest("Content-Type must be application/x-www-form-urlencoded")
            }
            let form = try request.formBody()
            let grants = form.all("grant_type"), assertions = form.all("assertion")
            guard grants.count == 1, assertions.count == 1 else {
                throw WalletProviderError.badRequest("send exactly one grant_type and one assertion")
            }
            guard grants[0] == Self.jwtBearerGrant else {
                throw WalletProviderError.badRequest("grant_type must be \(Self.jwtBearerGrant)")
            }
            let attestation = try provider.issueWalletAttestation(
                WalletAttestationRequest.parse(assertions[0], expectedType: WalletAttestationRequest.tokenType))
            return .jwt(attestation, contentType: "application/jwt")
        }

        // Item 6, second wire format: `{"assertion": <wp-war+jwt>}` → every format this
        // provider makes, same claims and key (the mdoc one is not built yet).
        for path in ["/wallet-attestations", "/key-binding"] {
            router.post(path, policy: .perClient) { _, request, _ in
                guard let object = try Self.jsonObjectBody(request).objectValue else {
                    throw WalletProviderError.badRequest("the body must be a JSON object")
                }
                guard let assertion = object["assertion"]?.stringValue else {
                    throw WalletProviderError.badRequest("assertion must be the wallet attestation request JWT")
                }
                let attestations = try provider.issueWalletAttestations(
                    WalletAttestationRequest.parse(assertion, expectedType: WalletAttestationRequest.walletAttestationsType),
                    formats: [.jwt, .sdJWT, .mdoc])
                var writer = JSONWriter(capacity: 4_096)
                writer.openObject()
                writer.name("wallet_attestations")
                writer.openArray()
                for attestation in attestations {
                    writer.openObject()
                    writer.name("format"); writer.string(attestation.format.rawValue)
                    writer.name("wallet_attestation"); writer.string(attestation.value)
                    writer.closeObject()
                }
                writer.closeArray()
                writer.closeObject()
                return HTTPResponse(status: .ok, headers: [("Content-Type", "application/json")], body: writer.bytes)
            }
        }
    }

    /// Item 7: `POST <wp>/key-attestations` `{"assertion": <wp-kar+jwt>}` →
    /// `{"key_attestation": <key-attestation+jwt>}`.
    func addKeyAttestationRoutes(to router: inout Router<String>) {
        let provider = self.provider
        router.post("/key-attestations", policy: .perClient) { _, request, _ in
            guard let assertion = try Self.jsonObjectBody(request).objectValue?["assertion"]?.stringValue else {
                throw WalletProviderError.badRequest("the body must be {\"assertion\": <wp-kar+jwt>}")
            }
            let attestation = try provider.issueKeyAttestation(KeyAttestationRequest.parse(assertion))
            return .json(["key_attestation": .string(attestation)])
        }
    }

    /// Item 8's admin API (admin token, else 401): `GET <wp>/admin/instances[?account=]`,
    /// `POST <wp>/admin/instances/{id}/status`, `DELETE <wp>/admin/accounts/{id}`.
    func addAdminRoutes(to router: inout Router<String>) {
        let provider = self.provider
        @Sendable func authorize(_ request: HTTPRequest) throws(WalletProviderError) {
            do throws(AdminAccess.Refusal) {
                try AdminAccess(tokenDigest: provider.adminTokenDigest).check(request)
            } catch {
                throw WalletProviderError(.unauthorized, error.errorDescription)
            }
        }
        router.post("/admin/instances/{id}/status", policy: .perClient) { _, request, parameters in
            try authorize(request)
            let change = try InstanceStatusChange.parse(Self.jsonObjectBody(request))
            let record = try provider.changeStatus(instance: parameters.require("id"), change)
            return HTTPResponse(status: .ok, headers: [("Content-Type", "application/json")], body: WalletInstanceJSON.one(record))
        }
        // Issue 21, item 8: one account's state, instances, held-key count and transfer sessions.
        router.get("/admin/accounts/{id}", policy: .perClient) { _, request, parameters in
            try authorize(request)
            return .json(try provider.accountSummary(parameters.require("id")))
        }
        router.delete("/admin/accounts/{id}", policy: .perClient) { _, request, parameters in
            try authorize(request)
            try provider.purgeAccount(parameters.require("id"))
            return HTTPResponse(status: .noContent)
        }
        router.get("/admin/instances", policy: .perClient) { _, request, _ in
            try authorize(request)
            let accounts = request.queryValues("account")
            guard accounts.count <= 1 else { throw WalletProviderError.badRequest("at most one account") }
            let instances = try provider.instances(account: accounts.first)
            return HTTPResponse(status: .ok, headers: [("Content-Type", "application/json")], body: WalletInstanceJSON.list(instances))
        }
    }
}
