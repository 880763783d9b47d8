import HTTP

extension Explorer {
    /// `GET /explorer/chain?sub=<entity ID>&trust_anchor=<entity ID>`: every trust chain from the
    /// subject to the anchor, the one `resolve` picks marked, the metadata policy step by step.
    /// Bad input is a page saying what is wrong with a 4xx status: 400 for a malformed or
    /// refused request, 404 when there is no subject or chain, 422 when chains exist but none is
    /// valid (the page then shows where each fails).
    func chainRoutes(into router: inout Router<Void>) {
        router.get("/explorer/chain", policy: .html) { _, request, _ in
            let subject = request.queryValues("sub").first, anchor = request.queryValues("trust_anchor").first
            return page(hosted: [subject, anchor]) {
                let trace = chainTrace(subject: subject, trustAnchor: anchor)
                let status: HTTPStatus
                switch trace.problem?.kind {
                case nil: status = .ok
                case .badRequest: status = .badRequest
                case .notFound: status = .notFound
                case .unprocessable: status = .unprocessableContent
                }
                return .html(ChainPage.render(trace, baseURL: baseURL), status: status)
            }
        }
    }
}
