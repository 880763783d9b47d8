import HTTP
import Pages
import Support

extension WalletProviderRoutes {
    /// `<wp>/instances`, the HTML page of the instances (item 8): GET lists them, a POST of its
    /// form (`id`, `reason`, and `admin_token` off loopback) revokes one and shows the list again.
    func addPageRoutes(to router: inout Router<String>) {
        let provider = self.provider

        router.get("/instances", policy: .html) { _, request, _ in
            if let refused = Self.refusedPage(provider, request, formToken: nil) { return refused }
            return .html(try provider.instancesPage())
        }
        router.post("/instances", policy: .html) { _, request, _ in
            let form = try request.formBody()
            if let refused = Self.refusedPage(provider, request, formToken: form.all("admin_token").first) { return refused }
            if let session = form.all("cancel_transfer").first { return try Self.cancelTransfer(provider, session) }
            guard let id = form.all("id").first, !id.isEmpty else {
                return .html(try provider.instancesPage(error: "pick an instance to revoke"), status: .badRequest)
            }
            let reason = form.all("reason").first.flatMap { $0.isEmpty ? nil : $0 }
            do throws(WalletProviderError) {
                if let reason, reason.utf8.count > 1_000 { throw .badRequest("the reason is longer than 1000 bytes") }
                let record = try provider.changeStatus(instance: id, InstanceStatusChange(status: .revoked, reason: reason))
                // The page is answered here rather than by a redirect: off loopback the admin
                // token came in this form, and a redirected GET would not carry it.
                return .html(try provider.instancesPage(notice: "Revoked \(record.id): it is \(record.state) now."))
            } catch {
                // A person gets the list back with the reason (404 unknown instance, 403 uninstalled).
                if error.statusCode >= 500 { throw error }
                return .html(try provider.instancesPage(error: error.description), status: error.status)
            }
        }
    }

    /// The page's Cancel button of an open transfer session: the page again with what happened.
    static func cancelTransfer(_ provider: WalletProvider, _ id: String) throws(WalletProviderError) -> HTTPResponse {
        do throws(WalletProviderError) {
            let session = try provider.cancelTransferAsAdmin(id)
            return .html(try provider.instancesPage(notice: "Cancelled transfer session \(session.id)."))
        } catch {
            if error.statusCode >= 500 { throw error }
            return .html(try provider.instancesPage(error: error.description), status: error.status)
        }
    }

    /// On a loopback base URL: the open pages' guard (another host, a cross-site post) unless
    /// the admin token vouches for the request. Elsewhere: the admin token, as an
    /// `Authorization: Bearer` header or the form's `admin_token`. 403 in the page layout.
    static func refusedPage(_ provider: WalletProvider, _ request: HTTPRequest, formToken: String?) -> HTTPResponse? {
        let access = AdminAccess(tokenDigest: provider.adminTokenDigest)
        let tokenAccepted = (request.header("authorization").map { (try? access.check(authorization: $0)) != nil } ?? false)
            || (formToken.map { (try? access.check(authorization: "Bearer " + $0)) != nil } ?? false)
        if tokenAccepted { return nil }
        let reason: String
        if provider.instancesPageIsOpen {
            let source = PageRequestSource(
                host: request.header("host"), forwardedHosts: request.header("x-forwarded-host").map { [$0] } ?? [],
                origin: request.header("origin"), referer: request.header("referer"), fetchSite: request.header("sec-fetch-site"),
                isPost: request.method == .post)
            guard let refusal = provider.instancesPageRefusal(source) else { return nil }
            reason = refusal
        } else {
            reason = "this page needs the admin token (Keys/admin-token) off this machine"
        }
        return .html(provider.instancesForbiddenPage(reason: reason), status: .forbidden)
    }
}
