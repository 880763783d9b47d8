/// What a route runs: the mount's context (e.g. the entity), the request, and the `{name}`
/// segments of the route template. A thrown `ErrorResponse` (or `RedirectedError`) renders
/// itself; anything else becomes 500 `server_error`.
public typealias RouteHandler<Context> = @Sendable (Context, HTTPRequest, PathParameters) throws -> HTTPResponse

/// The routes of one service (federation, the OpenID4VCI issuer, ...) keyed by method and path
/// template, relative to where the service is mounted (see `Site`). Built once, then only read.
///
///     var router = Router<Entity>()
///     router.get("/.well-known/openid-federation", memo: true) { entity, request, _ in ... }
///     router.post("/offers/{id}", policy: .perClient) { entity, request, parameters in ... }
///
/// HEAD is answered by the GET route (the server sends no body). A path that matches with
/// another method gets 405 with `Allow`; OPTIONS on a path with a `.publicRead` route answers a
/// CORS preflight.
public struct Router<Context: Sendable>: Sendable {
    struct Route: Sendable {
        let policy: ResponsePolicy
        let memo: Bool
        /// Larger request bodies than the server's `bodyLimit` this route takes; nil: the server's.
        var bodyLimit: Int? = nil
        let handler: RouteHandler<Context>
    }

    /// The routes sharing one template, in the order they were added (the order `Allow` lists).
    /// A list, not a dictionary: a path has one to three methods, and hashing the method cost
    /// more than comparing it with each.
    struct PathRoutes: Sendable {
        let template: PathTemplate
        var routes: [(method: HTTPMethod, route: Route)] = []

        func route(_ method: HTTPMethod) -> Route? {
            for entry in routes where entry.method == method { return entry.route }
            return nil
        }

        var methods: [HTTPMethod] { routes.map(\.method) }
    }

    private(set) var paths: [PathRoutes] = []
    /// Templates without `{name}` segments: their text and index into `paths`. Scanned, comparing
    /// lengths first and then bytes: a router has a handful, and a dictionary keyed by
    /// `Substring` hashes the path on every request (measured: see docs/performance.md).
    private var literal: [(text: String, index: Int)] = []
    /// The UTF-8 length of each of `literal`'s texts, compared before any text is touched.
    private var literalLengths: [Int] = []
    /// Indexes of templates with `{name}` segments, tried in the order they were added.
    private var templated: [Int] = []

    public init() {}

    /// Adds a route. `memo: true` lets the server reuse a 200 answer for an identical GET/HEAD
    /// without credentials for up to a second (never past the handler's own `reusable(until:)`);
    /// only for answers that depend on nothing but the URL and the routing headers.
    public mutating func add(
        _ method: HTTPMethod, _ template: String, policy: ResponsePolicy = .publicRead, memo: Bool = false,
        _ handler: @escaping RouteHandler<Context>
    ) {
        insert(method, PathTemplate(template), Route(policy: policy, memo: memo, handler: handler))
    }

    /// One router with the routes of all of `routers`, for a mount that serves them all: one
    /// lookup instead of one per router. A template in several of them becomes one path with
    /// all their methods; the same method on it twice is a programming error, as with `add`.
    public init(merging routers: [Router<Context>]) {
        self.init()
        for router in routers {
            for path in router.paths {
                for entry in path.routes { insert(entry.method, path.template, entry.route) }
            }
        }
    }

    private mutating func insert(_ method: HTTPMethod, _ template: PathTemplate, _ route: Route) {
        let index: Int
        if let existing = paths.firstIndex(where: { $0.template == template }) {
            index = existing
        } else {
            index = paths.count
            paths.append(PathRoutes(template: template))
            if template.isLiteral {
                literal.append((text: template.description, index: index))
                literalLengths.append(template.description.utf8.count)
            } else {
                templated.append(index)
            }
        }
        precondition(paths[index].route(method) == nil, "route \(method) \(template) added twice")
        paths[index].routes.append((method: method, route: route))
    }

    public mutating func get(
        _ template: String, policy: ResponsePolicy = .publicRead, memo: Bool = false, _ handler: @escaping RouteHandler<Context>
    ) { add(.get, template, policy: policy, memo: memo, handler) }

    /// `bodyLimit`: the largest body this route reads, when it must take more than the server's
    /// `bodyLimit` (every other route keeps that one; see `bodyLimit(for:path:)`).
    public mutating func post(
        _ template: String, policy: ResponsePolicy = .publicRead, bodyLimit: Int? = nil, _ handler: @escaping RouteHandler<Context>
    ) {
        insert(.post, PathTemplate(template), Route(policy: policy, memo: false, bodyLimit: bodyLimit, handler: handler))
    }

    public mutating func put(
        _ template: String, policy: ResponsePolicy = .perClient, _ handler: @escaping RouteHandler<Context>
    ) { add(.put, template, policy: policy, handler) }

    public mutating func delete(
        _ template: String, policy: ResponsePolicy = .perClient, _ handler: @escaping RouteHandler<Context>
    ) { add(.delete, template, policy: policy, handler) }

    /// The answer for `request` whose path below the mount is `path` ("/fetch"); nil when no
    /// template matches the path, so the caller can try elsewhere or answer 404.
    public func respond(to request: HTTPRequest, path: Substring, context: Context) -> HTTPResponse? {
        guard let (entry, parameters) = find(path.isEmpty ? "/" : path) else { return nil }
        if let route = entry.route(request.method) ?? (request.method == .head ? entry.route(.get) : nil) {
            return Self.run(route, context: context, request: request, parameters: parameters)
        }
        let isPublic = entry.routes.contains { $0.route.policy == .publicRead }
        if request.method == .options && isPublic {
            return BuiltinResponses.preflight(allow: Self.allow(entry, isPublic: true))
        }
        let refused = HTTPResponse.error(
            status: .methodNotAllowed, code: "invalid_request", description: "method \(request.method) is not allowed here")
            .adding(header: "Allow", Self.allow(entry, isPublic: isPublic))
        return (isPublic ? ResponsePolicy.publicRead : .perClient).apply(to: refused)
    }

    /// The body limit of the route `method` at `path` takes, when it set one.
    public func bodyLimit(for method: HTTPMethod, path: Substring) -> Int? {
        find(path.isEmpty ? "/" : path)?.0.route(method)?.bodyLimit
    }

    private func find(_ path: Substring) -> (PathRoutes, PathParameters)? {
        if let index = literalIndex(path) { return (paths[index], PathParameters()) }
        for index in templated {
            if let parameters = paths[index].template.match(path) { return (paths[index], parameters) }
        }
        return nil
    }

    /// The index of the literal template equal to `path`, byte for byte (paths are case-sensitive).
    private func literalIndex(_ path: Substring) -> Int? {
        var path = path
        return path.withUTF8 { bytes -> Int? in
            for i in literalLengths.indices where literalLengths[i] == bytes.count {
                if MountTable.withBytes(literal[i].text, { $0.elementsEqual(bytes) }) { return literal[i].index }
            }
            return nil
        }
    }

    /// The `Allow` value: the path's methods, HEAD with GET, OPTIONS where preflights are answered.
    private static func allow(_ entry: PathRoutes, isPublic: Bool) -> String {
        var methods = entry.methods
        if entry.route(.get) != nil && entry.route(.head) == nil { methods.insert(.head, at: methods.firstIndex(of: .get)! + 1) }
        if isPublic && entry.route(.options) == nil { methods.append(.options) }
        return methods.map(\.name).joined(separator: ", ")
    }

    private static func run(
        _ route: Route, context: Context, request: HTTPRequest, parameters: PathParameters
    ) -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try route.handler(context, request, parameters)
        } catch {
            response = ErrorRendering.response(for: error)
        }
        guard let start = response.deferredStart else { return finish(response, route) }
        return .deferred { complete in start(complete.mapping { finish($0, route) }) }
    }

    /// The route's memo choice and policy headers, on direct and deferred answers alike.
    private static func finish(_ response: consuming HTTPResponse, _ route: Route) -> HTTPResponse {
        if !route.memo {
            response = response.notReusable()
        } else if response.reusableUntil == nil {
            response = response.reusable(until: .max)
        }
        // Checked here as well as in `apply`: handed to it, an answer that already carries the
        // policy's headers (a cached statement's) was copied once more.
        if response.appliedPolicy == route.policy { return response }
        return route.policy.apply(to: response)
    }
}
