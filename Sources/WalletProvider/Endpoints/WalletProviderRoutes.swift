import HTTP
import JSON
import Support

/// The Wallet Provider's routes, mounted at its entity ID beside the federation's. Handlers
/// parse, call the provider, render; every answer is per client (`no-store`) but the CA and
/// the informational pages.
public struct WalletProviderRoutes: Sendable {
    public let provider: WalletProvider

    public init(provider: WalletProvider) { self.provider = provider }

    /// Where registrations are accepted: the IT-Wallet path and the two older spellings
    /// wallets in the field still use.
    public static let registrationPaths = ["/wallet-instance", "/wallet-instances", "/instance-initialization"]

    public func router() -> Router<String> {
        var router = Router<String>()
        let provider = self.provider

        // Item 3: a fresh stateless nonce. Nothing is stored, so nothing can fail but the
        // handler itself (500 `server_error` as JSON through the error rendering).
        router.get("/nonce", policy: .perClient) { _, _, _ in
            var writer = JSONWriter(capacity: 80)
            writer.openObject()
            writer.name("nonce"); writer.string(provider.issueNonce())
            writer.closeObject()
            return HTTPResponse(status: .ok, headers: [("Content-Type", "application/json")], body: writer.bytes)
        }

        for path in Self.registrationPaths {
            router.post(path, policy: .perClient) { _, request, _ in
                let body = try Self.jsonObjectBody(request)
                try provider.register(RegistrationRequest.parse(body))
                return HTTPResponse(status: .noContent)
            }
        }

        router.post("/dev/key-attestation", policy: .perClient) { _, request, _ in
            try Self.checkDevAccess(provider, request)
            let body = try Self.jsonObjectBody(request)
            let jwt = try provider.makeDevelopmentKeyAttestation(DevKeyAttestationRequest.parse(body))
            return .json(["key_attestation": .string(jwt)])
        }

        addAttestationRoutes(to: &router)
        addAdminRoutes(to: &router)
        addKeyAttestationRoutes(to: &router)
        addPageRoutes(to: &router)
        addInstructionRoutes(to: &router)

        let ca = HTTPResponse(status: .ok, headers: [("Content-Type", "application/x-pem-file")],
                              body: Array(provider.keys.ca.pem().utf8)).applying(.publicRead).prepared()
        router.get("/ca.pem", memo: true) { _, _, _ in ca }

        // The federation_entity URLs (item 2) point here, so none of them is a dead link.
        let home = HTTPResponse.text(
            "Trustbed test Wallet Provider \(provider.entityID)\n\nnonce: \(provider.urls.nonce)\n"
                + "registration: \(provider.urls.walletInstance)\nwallet attestations: \(provider.urls.token)\n"
                + "CA: \(provider.urls.ca)\n")
            .applying(.publicRead).prepared()
        router.get("/", memo: true) { _, _, _ in home }
        let policy = HTTPResponse.text(
            "Trustbed test Wallet Provider: a mock for testing wallets. It keeps the public keys and device facts of the "
                + "wallet instances registered with it and nothing about people. Never use it with real personal data.\n")
            .applying(.publicRead).prepared()
        router.get("/policy", memo: true) { _, _, _ in policy }
        let terms = HTTPResponse.text(
            "Trustbed test Wallet Provider: provided for testing only, without any warranty. Attestations it issues "
                + "are test artifacts and vouch for nothing outside a test federation.\n")
            .applying(.publicRead).prepared()
        router.get("/terms", memo: true) { _, _, _ in terms }
        let logo = HTTPResponse.text(Self.logoSVG, contentType: "image/svg+xml").applying(.publicRead).prepared()
        router.get("/logo.svg", memo: true) { _, _, _ in logo }
        return router
    }

    /// The body as a JSON value. Anything but `application/json` that parses is this
    /// endpoint's `bad_request` (IT-Wallet), not the generic 400 `invalid_request`.
    static func jsonObjectBody(_ request: HTTPRequest) throws(WalletProviderError) -> JSONValue {
        guard request.mediaType == "application/json" else {
            throw .badRequest("Content-Type must be application/json")
        }
        do {
            return try JSONValue.parse(request.body)
        } catch {
            throw .badRequest("the body is not valid JSON: \(error)")
        }
    }

    /// `POST <wp>/dev/key-attestation` is open on a loopback base URL, as `/offers/new` is,
    /// but only when the request names this machine (`Host` a loopback name on the base URL's
    /// port): a page that rebinds its own DNS name to 127.0.0.1 still sends its own name.
    /// Otherwise it needs the admin token (`AdminAccess`).
    static func checkDevAccess(_ provider: WalletProvider, _ request: HTTPRequest) throws(WalletProviderError) {
        if !provider.devEndpointNeedsAdminToken, Self.namesThisMachine(provider, host: request.header("host")),
           request.header("x-forwarded-host") == nil {
            return
        }
        do {
            try AdminAccess(tokenDigest: provider.adminTokenDigest).check(request)
        } catch {
            throw WalletProviderError(.unauthorized, error.errorDescription)
        }
    }

    static func namesThisMachine(_ provider: WalletProvider, host: String?) -> Bool {
        guard let host, let authority = try? URIAuthority(parsing: host), authority.userinfo == nil,
              let base = try? URIReference(parsing: provider.entityID) else { return false }
        return URIAuthority.loopbackNames.contains(ASCIICase.lowercased(authority.host))
            && (authority.port == nil || authority.port == base.effectivePort)
    }

    static let logoSVG = """
        <svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">\
        <rect width="64" height="64" rx="12" fill="#1d4ed8"/>\
        <text x="32" y="41" font-family="sans-serif" font-size="22" fill="#fff" text-anchor="middle">WP</text></svg>

        """
}
