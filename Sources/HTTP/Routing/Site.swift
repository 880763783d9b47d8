/// The mount table: which service answers a request URL. Each mount is an absolute URL (an
/// entity ID such as `http://127.0.0.1:8080/ta` or `https://other.example/`) with a context
/// value (the entity) and the routers of the services it runs; `root` holds server-level routes
/// (`/health`, `/`) tried when no mount answers. Immutable: the owner builds a new site on
/// reload and swaps it whole (e.g. in a `Locked`).
///
/// A request URL is rebuilt from `X-Forwarded-Proto`/`X-Forwarded-Host` (first values) or
/// `Host`, and the mount whose URL is the longest prefix at a segment boundary wins. Mounts
/// under the base URL also match by path alone, whatever name the client used for us. Then the
/// RFC 8414 §3.1 insertion form: `<origin>/.well-known/<document>/<mount path>` is the mount at
/// `<origin>/<mount path>` with route path `/.well-known/<document>` (wallets build OpenID4VCI
/// and OAuth metadata URLs that way).
///
/// Lookup costs the same for 10 or 100,000 mounts: dictionary lookups by origin, then by path
/// prefix, longest first and one segment shorter each time (never deeper than the deepest
/// mount), so the cost grows with the path's depth only.
public struct Site<Context: Sendable>: Sendable {
    public struct Mount: Sendable {
        public let url: String
        public let context: Context
        public let routers: [Router<Context>]

        public init(url: String, context: Context, routers: [Router<Context>]) {
            self.url = url
            self.context = context
            self.routers = routers
        }
    }

    private struct Origin: Hashable, Sendable {
        let scheme: String
        let authority: String
    }

    private let mounts: [Mount]
    /// Origin → mount path ("" for the origin itself, no trailing slash) → index in `mounts`.
    private let byOrigin: [Origin: [Substring: Int]]
    /// Mounts under the base URL by their path there (the base URL's path included).
    private let underBase: [Substring: Int]
    /// Segments in the deepest mount path: no longer prefix can match.
    private let maxDepth: Int
    private let root: Router<Void>

    /// `baseURL` is the server's public URL (`--base-url`). When two mounts share a URL the
    /// first is kept.
    public init(baseURL: String, mounts: [Mount], root: Router<Void> = Router()) {
        let base = Self.split(baseURL)
        var byOrigin: [Origin: [Substring: Int]] = [:]
        var underBase: [Substring: Int] = [:]
        var maxDepth = 0
        let baseOrigin = Origin(scheme: ASCII.lowercased(base.scheme), authority: ASCII.lowercased(base.authority))
        for (index, mount) in mounts.enumerated() {
            let parts = Self.split(mount.url)
            let origin = Origin(scheme: ASCII.lowercased(parts.scheme), authority: ASCII.lowercased(parts.authority))
            let path = Substring(parts.path)
            if byOrigin[origin, default: [:]][path] == nil { byOrigin[origin, default: [:]][path] = index }
            if origin == baseOrigin, path.hasPrefix(base.path + "/"), underBase[path] == nil {
                underBase[path] = index
            }
            maxDepth = max(maxDepth, path.utf8.count(where: { $0 == UInt8(ascii: "/") }))
        }
        self.mounts = mounts
        self.byOrigin = byOrigin
        self.underBase = underBase
        self.maxDepth = maxDepth
        self.root = root
    }

    /// The answer to `request`: the matched mount's routers in order, then `root`, else a JSON
    /// 404 `not_found` any origin may read.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let origin = Self.origin(of: request)
        if let (index, rest) = longestMount(origin: origin, path: Substring(request.path)),
           let response = answer(mounts[index], path: rest, request: request) {
            return response
        }
        if let (index, documentPath) = insertedMount(origin: origin, path: Substring(request.path)),
           let response = answer(mounts[index], path: documentPath, request: request) {
            return response
        }
        if let response = root.respond(to: request, path: Substring(request.path), context: ()) {
            return response
        }
        return ResponsePolicy.publicRead.apply(to: .error(
            status: .notFound, code: "not_found", description: "nothing is served at \(request.path)"))
    }

    /// The mount a request goes to and the route path below it, by longest prefix, then by the
    /// insertion form; nil when none.
    public func mount(for request: HTTPRequest) -> (mount: Mount, path: Substring)? {
        let origin = Self.origin(of: request)
        if let (index, rest) = longestMount(origin: origin, path: Substring(request.path)) { return (mounts[index], rest) }
        if let (index, path) = insertedMount(origin: origin, path: Substring(request.path)) { return (mounts[index], path) }
        return nil
    }

    private func answer(_ mount: Mount, path: Substring, request: HTTPRequest) -> HTTPResponse? {
        for router in mount.routers {
            if let response = router.respond(to: request, path: path, context: mount.context) { return response }
        }
        return nil
    }

    /// The longest mount path that is `path` or a prefix of it ending at a `/`, first on the
    /// request's origin, then among the mounts under the base URL.
    private func longestMount(origin: Origin?, path: Substring) -> (Int, Substring)? {
        let start = Self.truncated(path, toSegments: maxDepth)
        if let origin, let table = byOrigin[origin], let found = Self.longest(in: table, path: path, from: start) {
            return found
        }
        return Self.longest(in: underBase, path: path, from: start)
    }

    private static func longest(in table: [Substring: Int], path: Substring, from start: Substring) -> (Int, Substring)? {
        guard !table.isEmpty else { return nil }
        var prefix = start
        while true {
            if let index = table[prefix] { return (index, path[prefix.endIndex...]) }
            guard let slash = prefix.lastIndex(of: "/") else { return nil }
            prefix = prefix[..<slash]
        }
    }

    /// `/.well-known/<document>/<mount path>` → the mount at exactly `<mount path>` and the
    /// route path `/.well-known/<document>` (RFC 8414 §3.1).
    private func insertedMount(origin: Origin?, path: Substring) -> (Int, Substring)? {
        let prefix = "/.well-known/"
        guard path.hasPrefix(prefix) else { return nil }
        let afterPrefix = path.index(path.startIndex, offsetBy: prefix.utf8.count)
        guard let slash = path[afterPrefix...].firstIndex(of: "/"), slash > afterPrefix else { return nil }
        var mountPath = path[slash...]
        while mountPath.hasSuffix("/") { mountPath = mountPath.dropLast() }
        guard !mountPath.isEmpty else { return nil }
        let documentPath = path[..<slash]
        if let origin, let index = byOrigin[origin]?[mountPath] { return (index, documentPath) }
        if let index = underBase[mountPath] { return (index, documentPath) }
        return nil
    }

    /// `path` cut before its `(segments + 1)`-th `/`: a mount path has at most `segments`.
    private static func truncated(_ path: Substring, toSegments segments: Int) -> Substring {
        var seen = 0
        var index = path.startIndex
        while index < path.endIndex {
            if path[index] == "/" {
                if seen == segments { return path[..<index] }
                seen += 1
            }
            index = path.index(after: index)
        }
        return path
    }

    /// Scheme and authority the client used: forwarded by the proxy, else `Host` over http.
    private static func origin(of request: HTTPRequest) -> Origin? {
        guard let host = request.header("x-forwarded-host").map(HTTPRequest.firstValue) ?? request.header("host")?[...] else {
            return nil
        }
        let scheme = request.header("x-forwarded-proto").map(HTTPRequest.firstValue) ?? "http"
        return Origin(scheme: ASCII.lowercased(String(scheme)), authority: ASCII.lowercased(String(host)))
    }

    /// Scheme, authority and path (without trailing slashes; "" for an origin) of an absolute URL.
    static func split(_ url: String) -> (scheme: String, authority: String, path: String) {
        guard let schemeEnd = url.firstRange(of: "://") else { return ("", "", url) }
        let scheme = String(url[..<schemeEnd.lowerBound])
        let afterScheme = url[schemeEnd.upperBound...]
        guard let slash = afterScheme.firstIndex(of: "/") else { return (scheme, String(afterScheme), "") }
        var path = String(afterScheme[slash...])
        while path.hasSuffix("/") { path.removeLast() }
        return (scheme, String(afterScheme[..<slash]), path)
    }
}
