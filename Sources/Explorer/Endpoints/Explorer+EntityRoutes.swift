import Federation
import HTTP
import Support

extension Explorer {
    /// The entity page, the subordinate statement page and the check page. Every failure is a
    /// page in the layout with a 4xx status (502 when another server did not answer), never a
    /// JSON error: these are for people. A page about another server's entity is made on the
    /// remote work pool (`page(hosted:_:)`), bounded by the resolver's time budget, allow-list
    /// and size limit.
    func entityRoutes(into router: inout Router<Void>) {
        router.get("/explorer/entity", policy: .html) { _, request, _ in
            let q = request.parameters
            let id = q.all("id").first
            return page(hosted: [id]) {
                do {
                    let entityID = try Self.entityID(q, "id")
                    let offset = try Self.offset(q)
                    let view = try EntityView.build(host: host, entityID: entityID, offset: offset, baseURL: baseURL, deadline: pageDeadline())
                    return .html(EntityPage.render(view, baseURL: baseURL))
                } catch {
                    return Self.failure(error, id: id)
                }
            }
        }
        router.get("/explorer/statement", policy: .html) { _, request, _ in
            let q = request.parameters
            return page(hosted: [q.all("iss").first]) {
                do {
                    let issuer = try Self.entityID(q, "iss")
                    let subject = try Self.entityID(q, "sub")
                    let view = try SubordinateStatementView.build(host: host, issuer: issuer, subject: subject, deadline: pageDeadline())
                    return .html(StatementPage.render(view, baseURL: baseURL))
                } catch {
                    return Self.failure(error, id: q.all("sub").first)
                }
            }
        }
        router.get("/explorer/check", policy: .html) { _, request, _ in
            let q = request.parameters
            return page(hosted: [q.all("id").first]) {
                do {
                    let entityID = try Self.entityID(q, "id")
                    return .html(CheckPage.render(CheckReport.build(host: host, entityID: entityID), baseURL: baseURL))
                } catch {
                    return Self.failure(error, id: q.all("id").first)
                }
            }
        }
    }

    /// The resolver's budget for everything one page fetches from other servers.
    private func pageDeadline() -> Deadline { .after(seconds: host.chainLimits.resolveBudget) }

    private static func entityID(_ q: Parameters, _ name: String) throws(ExplorerFailure) -> String {
        let values = q.all(name)
        guard values.count <= 1 else { throw .badRequest("\(name) is given \(values.count) times") }
        return try ExplorerFailure.checkEntityID(values.first, parameter: name)
    }

    private static func offset(_ q: Parameters) throws(ExplorerFailure) -> Int {
        let values = q.all("offset")
        guard let text = values.first, !text.isEmpty else { return 0 }
        guard values.count == 1, text.utf8.count <= 9, let n = Int(text), n >= 0 else {
            throw .badRequest("offset must be one whole number of at least 0")
        }
        return n
    }

    private static func failure(_ error: any Error, id: String?) -> HTTPResponse {
        let failure = error as? ExplorerFailure ?? ExplorerFailure(status: 400, title: "Bad request", message: "\(error)")
        return .html(StatementView.failure(failure, id: id), status: HTTPStatus(code: failure.status))
    }
}
