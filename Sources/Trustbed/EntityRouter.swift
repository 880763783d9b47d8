import HTTP

/// Maps a request to the hosted entity whose ID is the longest prefix of the request URL
/// (DESIGN "Entities and URLs"). The URL is rebuilt from `X-Forwarded-Proto`/`X-Forwarded-Host`
/// or `Host`, so entities with their own absolute `entity_id` are routed by host behind a proxy;
/// entities under the base URL also match by path alone, whatever name the client used for us.
struct EntityRouter: Sendable {
    private struct Route: Sendable { let entityID: String; let pathPrefix: String? }
    private let routes: [Route]

    init(entityIDs: [String], baseURL: String) {
        let basePath = Self.path(of: baseURL)
        routes = entityIDs.sorted { $0.count > $1.count }.map { id in
            Route(entityID: id, pathPrefix: id.hasPrefix(baseURL + "/") ? basePath + String(id.dropFirst(baseURL.count)) : nil)
        }
    }

    /// The entity and the rest of the path (e.g. "/fetch"), or nil.
    func match(_ request: HTTPRequest) -> (entityID: String, rest: String)? {
        let scheme = request.header("x-forwarded-proto")?.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? "http"
        if let host = request.header("x-forwarded-host")?.split(separator: ",").first.map({ $0.trimmingCharacters(in: .whitespaces) }) ?? request.header("host") {
            let url = "\(scheme)://\(host)\(request.path)"
            for r in routes { if let rest = Self.rest(of: url, after: r.entityID) { return (r.entityID, rest) } }
        }
        for r in routes {
            if let prefix = r.pathPrefix, let rest = Self.rest(of: request.path, after: prefix) { return (r.entityID, rest) }
        }
        return nil
    }

    /// What follows `prefix` in `s`, when `prefix` ends at a path segment boundary.
    private static func rest(of s: String, after prefix: String) -> String? {
        guard s.hasPrefix(prefix) else { return nil }
        let rest = String(s.dropFirst(prefix.count))
        return rest.isEmpty || rest.hasPrefix("/") ? rest : nil
    }

    /// The path of an absolute URL without its trailing slash ("" for an origin).
    static func path(of url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return "" }
        let afterScheme = url[schemeEnd.upperBound...]
        guard let slash = afterScheme.firstIndex(of: "/") else { return "" }
        var p = String(afterScheme[slash...])
        while p.hasSuffix("/") { p.removeLast() }
        return p
    }
}
