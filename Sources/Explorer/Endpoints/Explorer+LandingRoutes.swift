import HTTP
import Support

extension Explorer {
    /// The tree, search and picture of the hosted federation. Each answer is a page (or the
    /// SVG) under the HTML pages' policy; a bad parameter is a page saying so with a 4xx.
    func landingRoutes(into router: inout Router<Void>) {
        let tree = self.tree
        // Built on the first search, kept for this host (see EntitySearch).
        let search = EntitySearch(tree: tree)

        router.get("/explorer/tree", policy: .html) { _, request, _ in
            let parameters = request.parameters
            let id: String, offset: Int
            do throws(PageProblem) {
                id = try Self.requiredValue(parameters, "id")
                offset = try Self.offset(parameters)
            } catch {
                return Self.problemPage(error)
            }
            guard let level = tree.level(id, offset: offset) else {
                return Self.problemPage(PageProblem(
                    status: .notFound, title: "Not hosted here",
                    message: "\(id) is not an entity of this server, so it has no tree here.", entityID: id))
            }
            return .html(TreePage.render(level))
        }

        router.get("/explorer/search", policy: .html) { _, request, _ in
            let parameters = request.parameters
            let query: String, offset: Int
            do throws(PageProblem) {
                query = try Self.optionalValue(parameters, "q") ?? ""
                offset = try Self.offset(parameters)
                guard query.count <= EntitySearch.maxQueryLength else {
                    throw PageProblem(status: .badRequest, title: "Search too long",
                                      message: "A search is at most \(EntitySearch.maxQueryLength) characters.")
                }
            } catch {
                return Self.problemPage(error)
            }
            return .html(TreePage.render(search.search(query, offset: offset)))
        }

        router.get("/explorer/graph.svg", policy: .html) { _, _, _ in
            // The picture only changes with the host, and at 100,000 entities drawing it means
            // visiting every leaf: drawn once, on first request.
            let body = tree.rendered("graph.svg") { Array(GraphSVG.render(FederationGraph(tree: tree)).utf8) }
            return HTTPResponse(status: .ok, headers: [(name: "Content-Type", value: "image/svg+xml; charset=utf-8")], body: body)
        }
    }

    /// The answer of `/` for a browser (see `prefersHTML`): the landing page. The server's root
    /// route negotiates and delegates here; `Vary: Accept` because the same URL also answers JSON.
    /// The page depends on the host alone (declared trust marks, not their live status), so it
    /// is rendered once per host and kept with the tree.
    public func landingPage() -> HTTPResponse {
        let page = tree.rendered("landing") { Array(LandingPage.render(tree: tree).utf8) }
        return HTTPResponse(status: .ok, headers: [(name: "Content-Type", value: "text/html; charset=utf-8"), (name: "Vary", value: "Accept")],
                            body: page).applying(.html)
    }

    /// Whether `accept` (an `Accept` header, RFC 9110 §12.5.1) asks for HTML before JSON:
    /// `text/html` with a q above 0, and either no `application/json` with a q above 0 or one
    /// with a lower q, or the same q listed after it. So a browser gets the page, while
    /// `application/json`, curl's `*/*` and no header at all keep getting the JSON index.
    public static func prefersHTML(accept: String?) -> Bool {
        guard let accept else { return false }
        var html: (q: Double, position: Int)?
        var json: (q: Double, position: Int)?
        for (position, range) in accept.split(separator: ",").enumerated() {
            let pieces = range.split(separator: ";")
            guard let type = pieces.first?.trimmingSpacesAndLowercased else { continue }
            var q = 1.0
            for parameter in pieces.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingSpacesAndLowercased == "q" else { continue }
                // An unreadable weight counts as "not acceptable" rather than as a preference.
                q = Double(pair[1].trimmingSpacesAndLowercased).map { min(max($0, 0), 1) } ?? 0
            }
            if type == "text/html" && html.map({ q > $0.q }) ?? true { html = (q, position) }
            if type == "application/json" && json.map({ q > $0.q }) ?? true { json = (q, position) }
        }
        guard let html, html.q > 0 else { return false }
        guard let json, json.q > 0 else { return true }
        return html.q > json.q || (html.q == json.q && html.position < json.position)
    }

    /// What makes a page answer 4xx: its status, a title and a message in words.
    struct PageProblem: Error {
        let status: HTTPStatus
        let title: String
        let message: String
        var entityID: String? = nil
    }

    static func problemPage(_ problem: PageProblem) -> HTTPResponse {
        .html(TreePage.problem(title: problem.title, message: problem.message, entityID: problem.entityID), status: problem.status)
    }

    private static func optionalValue(_ p: Parameters, _ name: String) throws(PageProblem) -> String? {
        let values = p.all(name)
        guard values.count <= 1 else {
            throw PageProblem(status: .badRequest, title: "Bad request", message: "\(name) must not appear more than once.")
        }
        return values.first.flatMap { $0.isEmpty ? nil : $0 }
    }

    private static func requiredValue(_ p: Parameters, _ name: String) throws(PageProblem) -> String {
        guard let value = try optionalValue(p, name) else {
            throw PageProblem(status: .badRequest, title: "Bad request", message: "\(name) is missing: give an entity ID.")
        }
        return value
    }

    private static func offset(_ p: Parameters) throws(PageProblem) -> Int {
        guard let text = try optionalValue(p, "offset") else { return 0 }
        guard let n = Int(text), n >= 0 else {
            throw PageProblem(status: .badRequest, title: "Bad request", message: "offset must be a whole number, 0 or more.")
        }
        return n
    }
}

extension Substring {
    fileprivate var trimmingSpacesAndLowercased: String { String(self).trimmingSpaces.lowercased() }
}
