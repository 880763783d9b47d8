import HTTP
import Pages
import Support

extension VerifierRoutes {
    /// `/verify/new` (the form) and `/verify/{id}` (QR code while pending, then the verdict),
    /// following the offer pages: open on a loopback base URL behind `OpenPageAccess`, the admin
    /// token in the form elsewhere; a result page is reached by its unguessable id.
    func addPageRoutes(to router: inout Router<String>) {
        let verifier = self.verifier

        router.get("/verify/new", policy: .html) { _, request, _ in
            if let refused = Self.refusedPage(verifier, request) { return refused }
            return .html(verifier.newRequestPage())
        }
        router.post("/verify/new", policy: .html) { _, request, _ in
            if let refused = Self.refusedPage(verifier, request) { return refused }
            let form = try request.formBody()
            let filled = VerifyForm(
                template: form.all("template").first ?? "", dcql: form.all("dcql").first ?? "",
                clientIDPrefix: form.all("client_id_prefix").first.flatMap(ClientIDPrefix.init(rawValue:)),
                responseMode: form.all("response_mode").first.flatMap(ResponseMode.init(rawValue:)),
                sameDevice: form.all("same_device").contains { $0 == "yes" || $0 == "on" })
            do throws(VerificationError) {
                if verifier.pagesNeedAdminToken {
                    try verifier.authorizeAdmin(authorization: "Bearer " + (form.all("admin_token").first ?? ""))
                }
                var options = try verifier.options(from: filled)
                options.redirectToResultPage = filled.sameDevice
                let record = try verifier.createRequest(options)
                // 303: the browser follows with a GET, so a reload does not create another request.
                return .redirect(to: verifier.urls.resultPage(record.id), status: .seeOther)
            } catch {
                if error.codeValue == .serverError || error.codeValue == .temporarilyUnavailable { throw error }
                let status: HTTPStatus = error.codeValue == .unauthorized ? .forbidden : .badRequest
                return .html(verifier.newRequestPage(form: filled, error: error.description), status: status)
            }
        }
        router.get("/verify/{id}", policy: .html) { _, request, parameters in
            if let refused = Self.refusedPage(verifier, request) { return refused }
            guard let record = try verifier.request(id: parameters.require("id")) else {
                return .html(verifier.notFoundPage(), status: .notFound)
            }
            var response = HTTPResponse.html(try verifier.resultPage(record))
            // No JavaScript: the browser asks again until the wallet's answer is in.
            if verifier.requestResult(record)["state"] == "pending" { response.headers.append((name: "Refresh", value: "3")) }
            return response
        }
    }

    /// The open pages' guard against DNS rebinding and cross-site posts; the admin token, when
    /// sent, vouches for the request from anywhere. 403 in the page layout.
    static func refusedPage(_ verifier: Verifier, _ request: HTTPRequest) -> HTTPResponse? {
        let source = PageRequestSource(
            host: request.header("host"), forwardedHosts: request.header("x-forwarded-host").map { [$0] } ?? [],
            origin: request.header("origin"), referer: request.header("referer"), fetchSite: request.header("sec-fetch-site"),
            isPost: request.method == .post)
        guard let reason = verifier.openPageRefusal(source) else { return nil }
        if let authorization = request.header("authorization"), (try? verifier.authorizeAdmin(authorization: authorization)) != nil {
            return nil
        }
        return .html(verifier.forbiddenPage(reason: reason), status: .forbidden)
    }
}
