import HTTP

extension Explorer {
    /// Every explorer route, mounted on the server's root router (paths under `/explorer/`, a
    /// name no entity file may take, and the HTML answer of `/` for browsers). Each page adds
    /// its routes in its own `Endpoints/` file.
    public func routes(into router: inout Router<Void>) {
        landingRoutes(into: &router)
        entityRoutes(into: &router)
        chainRoutes(into: &router)
    }

    /// `page` at once when everything it shows is hosted here; otherwise on `remoteWork` with
    /// the connection suspended (a full pool answers 503 at once, as resolve does).
    func page(hosted entityIDs: [String?], _ page: @escaping @Sendable () -> HTTPResponse) -> HTTPResponse {
        guard let pool = remoteWork, entityIDs.contains(where: { $0.map { host.entity($0) == nil } ?? false }) else { return page() }
        return .deferred { complete in
            if !pool.submit({ complete(page()) }) {
                complete(.html(StatementView.failure(
                    ExplorerFailure(status: 503, title: "Busy", message: "Too many pages are waiting on other servers; retry shortly."),
                    id: nil), status: HTTPStatus(code: 503)))
            }
        }
    }
}
