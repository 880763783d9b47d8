import HTTP
import JSON
import Pages
import Support

extension IssuanceRoutes {
    /// Credential offers: the admin API, the offer by reference (OpenID4VCI §4.1.3), its QR
    /// codes, and the pages for people. Nothing here is memoized: offers expire and are
    /// created at any moment.
    func addOfferRoutes(to router: inout Router<String>) {
        let provider = self.provider

        router.post("/admin/offers", policy: .perClient) { _, request, _ in
            try provider.authorizeAdmin(authorization: request.header("authorization"))
            let offer = try provider.createOffer(OfferRequest.parse(try request.jsonBody()))
            return HTTPResponse(status: .created, headers: [(name: "Content-Type", value: "application/json"),
                                                            (name: "Location", value: provider.urls.credentialOffer(offer.id))],
                                body: provider.offerCreatedBody(offer))
        }

        // §4.1.3: the wallet dereferences credential_offer_uri with GET and gets the JSON. Any
        // origin may read it (a web wallet too), but nothing may cache it: it carries a code.
        router.get("/offers/{id}/credential-offer") { _, _, parameters in
            let offer = try Self.existingOffer(provider, parameters)
            return HTTPResponse(status: .ok, headers: [(name: "Content-Type", value: "application/json")],
                                body: provider.credentialOfferBody(offer)).adding(header: "Cache-Control", "no-store")
        }
        router.get("/offers/{id}/qr.png") { _, _, parameters in
            let offer = try Self.existingOffer(provider, parameters)
            let png = try QRCode(encoding: provider.offerURL(offer)).png()
            return HTTPResponse(status: .ok, headers: [("Content-Type", "image/png"), ("Cache-Control", "no-store")], body: png)
        }
        router.get("/offers/{id}/qr.svg") { _, _, parameters in
            let offer = try Self.existingOffer(provider, parameters)
            let svg = try QRCode(encoding: provider.offerURL(offer)).svg()
            return HTTPResponse.text(svg, contentType: "image/svg+xml")
                .adding(header: "Cache-Control", "no-store").adding(header: "X-Content-Type-Options", "nosniff")
        }

        router.get("/offers/new", policy: .html) { _, request, _ in
            if let refused = Self.refusedOpenPage(provider, request) { return refused }
            return .html(provider.newOfferPage())
        }
        router.post("/offers/new", policy: .html) { _, request, _ in
            if let refused = Self.refusedOpenPage(provider, request) { return refused }
            let form = try request.formBody()
            var filled = OfferForm()
            do throws(IssuanceError) {
                filled = OfferForm(
                    personaID: form.all("persona").first, credentialConfigurationIDs: form.all("credential_configuration_id"),
                    grant: form.all("grant").first.flatMap(OfferGrant.init(rawValue:)) ?? .preAuthorizedCode,
                    txCode: form.all("tx_code").contains { $0 == "yes" || $0 == "on" || $0 == "true" })
                if provider.offerFormNeedsAdminToken {
                    let token = form.all("admin_token").first ?? ""
                    try provider.authorizeAdmin(authorization: "Bearer " + token)
                }
                guard let persona = filled.personaID, !persona.isEmpty else { throw IssuanceError.invalidRequest("pick a persona") }
                guard !filled.credentialConfigurationIDs.isEmpty else {
                    throw IssuanceError.invalidRequest("pick at least one credential")
                }
                let offer = try provider.createOffer(
                    personaID: persona, credentialConfigurationIDs: filled.credentialConfigurationIDs, grant: filled.grant,
                    txCode: filled.txCode && filled.grant == .preAuthorizedCode)
                // 303: the browser follows with a GET, so a reload does not create another offer.
                return .redirect(to: provider.urls.offerPage(offer.id), status: .seeOther)
            } catch {
                if error.codeValue == .serverError { throw error }
                // A person gets the form back with the reason; a wrong token is 403 here (a 401
                // would need a WWW-Authenticate challenge the browser cannot answer).
                let status: HTTPStatus = error.codeValue == .unauthorized ? .forbidden : .badRequest
                return .html(provider.newOfferPage(form: filled, error: error.description), status: status)
            }
        }
        router.get("/offers/{id}", policy: .html) { _, request, parameters in
            if let refused = Self.refusedOpenPage(provider, request) { return refused }
            guard let offer = try provider.offer(id: parameters.require("id")) else {
                return .html(provider.offerNotFoundPage(), status: .notFound)
            }
            return .html(try provider.offerPage(offer))
        }
    }

    /// The open pages' guard against DNS rebinding and cross-site posts (`openPageRefusal`):
    /// 403 in the page layout. The admin token, when sent, vouches for the request from
    /// anywhere, as it does for the admin API.
    private static func refusedOpenPage(_ provider: PIDProvider, _ request: HTTPRequest) -> HTTPResponse? {
        let source = PageRequestSource(
            host: request.header("host"), forwardedHosts: request.header("x-forwarded-host").map { [$0] } ?? [],
            origin: request.header("origin"), referer: request.header("referer"), fetchSite: request.header("sec-fetch-site"),
            isPost: request.method == .post)
        guard let reason = provider.openPageRefusal(source) else { return nil }
        if let authorization = request.header("authorization"),
           (try? provider.authorizeAdmin(authorization: authorization)) != nil { return nil }
        return .html(provider.forbiddenPage(reason: reason), status: .forbidden)
    }

    private static func existingOffer(_ provider: PIDProvider, _ parameters: PathParameters) throws(IssuanceError) -> Offer {
        guard let offer = try provider.offer(id: parameters.require("id")) else {
            throw IssuanceError(.notFound, "no such credential offer, or it has expired")
        }
        return offer
    }
}
