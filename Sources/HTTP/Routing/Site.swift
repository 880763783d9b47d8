#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

    private let mounts: [Mount]
    /// The mounts' origins and the base URL's, numbered for `table`.
    private let origins: OriginTable
    /// (origin number, mount path without trailing slashes; "" for an origin) → mount index.
    private let table: MountTable
    /// The base URL's origin number, and its path followed by "/": the prefix of the paths of
    /// the mounts under the base URL.
    private let baseOrigin: Int32
    /// The base URL's authority, lower-cased, when its scheme is http; see `origin(of:)`.
    private let baseHTTPAuthority: String?
    private let basePrefix: String
    /// Segments in the deepest mount path: no longer prefix can match.
    private let maxDepth: Int
    private let root: Router<Void>

    /// `baseURL` is the server's public URL (`--base-url`). When two mounts share a URL the
    /// first is kept.
    public init(baseURL: String, mounts: [Mount], root: Router<Void> = Router()) {
        var origins = OriginTable()
        func number(_ scheme: String, _ authority: String) -> Int32 { origins.number(scheme: scheme, authority: authority) }
        let base = Self.split(baseURL)
        baseOrigin = number(base.scheme, base.authority)
        baseHTTPAuthority = ASCII.lowercased(base.scheme) == "http" ? ASCII.lowercased(base.authority) : nil
        basePrefix = base.path + "/"
        var table = MountTable(capacity: mounts.count)
        var maxDepth = 0
        for mount in mounts {
            let parts = Self.split(mount.url)
            let start = mount.url.utf8.count - parts.trailing - parts.path.utf8.count
            table.append(url: mount.url, origin: number(parts.scheme, parts.authority),
                         path: start..<(start + parts.path.utf8.count))
            maxDepth = max(maxDepth, parts.path.utf8.count(where: { $0 == UInt8(ascii: "/") }))
        }
        self.mounts = mounts
        self.origins = origins
        self.table = table
        self.maxDepth = maxDepth
        self.root = root
    }

    /// The answer to `request`: the matched mount's routers in order, then `root`, else a JSON
    /// 404 `not_found` any origin may read.
    ///
    /// Specialized here for the server's entity IDs as context: a caller in another module
    /// otherwise runs the generic code, which instantiates type metadata on every request
    /// (measured: see docs/performance.md).
    @_specialize(exported: true, where Context == String)
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let origin = origin(of: request)
        if let (index, rest) = longestMount(origin: origin, path: request.path),
           let response = answer(mounts[index], path: rest, request: request) {
            return response
        }
        if let (index, documentPath) = insertedMount(origin: origin, path: request.path),
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
        let origin = origin(of: request)
        if let (index, rest) = longestMount(origin: origin, path: request.path) { return (mounts[index], rest) }
        if let (index, path) = insertedMount(origin: origin, path: request.path) { return (mounts[index], path) }
        return nil
    }

    /// The body limit of the route `request` (its method, URL and headers; the body is not read
    /// yet) goes to, when that route set one larger than the server's; nil otherwise.
    public func bodyLimit(for request: HTTPRequest) -> Int? {
        guard let (mount, path) = mount(for: request) else { return nil }
        return mount.routers.lazy.compactMap { $0.bodyLimit(for: request.method, path: path) }.first
    }

    private func answer(_ mount: Mount, path: Substring, request: HTTPRequest) -> HTTPResponse? {
        for router in mount.routers {
            if let response = router.respond(to: request, path: path, context: mount.context) { return response }
        }
        return nil
    }

    /// The longest mount path that is `path` or a prefix of it ending at a `/`, first on the
    /// request's origin, then among the mounts under the base URL.
    private func longestMount(origin: Int32?, path: String) -> (Int, Substring)? {
        let found = MountTable.withBytes(path) { bytes -> (index: Int, length: Int)? in
            let start = Self.truncated(bytes, toSegments: maxDepth)
            if let origin, let found = longest(origin: origin, bytes, from: start, underBase: false) { return found }
            // On the base origin itself, the lookup above has tried every mount under the base URL.
            guard origin != baseOrigin else { return nil }
            return longest(origin: baseOrigin, bytes, from: start, underBase: true)
        }
        guard let found else { return nil }
        return (found.index, Self.suffix(of: path, from: found.length))
    }

    private func longest(origin: Int32, _ path: UnsafeBufferPointer<UInt8>, from start: Int, underBase: Bool)
        -> (index: Int, length: Int)? {
        var length = start
        while true {
            if let index = mount(origin: origin, path: UnsafeBufferPointer(rebasing: path[..<length]), underBase: underBase) {
                return (index, length)
            }
            guard let slash = path[..<length].lastIndex(of: UInt8(ascii: "/")) else { return nil }
            length = slash
        }
    }

    /// The mount at exactly `origin` and `path`; with `underBase`, only one under the base URL.
    private func mount(origin: Int32, path: UnsafeBufferPointer<UInt8>, underBase: Bool) -> Int? {
        guard let index = table.find(origin: origin, path: path) else { return nil }
        guard underBase else { return index }
        return MountTable.withBytes(basePrefix) { table.pathHasPrefix(index, $0) } ? index : nil
    }

    /// `/.well-known/<document>/<mount path>` → the mount at exactly `<mount path>` and the
    /// route path `/.well-known/<document>` (RFC 8414 §3.1).
    private func insertedMount(origin: Int32?, path: String) -> (Int, Substring)? {
        let found = MountTable.withBytes(path) { bytes -> (index: Int, slash: Int)? in
            let prefix: StaticString = "/.well-known/"
            let n = prefix.utf8CodeUnitCount
            guard bytes.count > n, memcmp(bytes.baseAddress!, prefix.utf8Start, n) == 0 else { return nil }
            guard let slash = bytes[n...].firstIndex(of: UInt8(ascii: "/")), slash > n else { return nil }
            var end = bytes.count
            while end > slash && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
            guard end > slash else { return nil }
            let mountPath = UnsafeBufferPointer(rebasing: bytes[slash..<end])
            if let origin, let index = mount(origin: origin, path: mountPath, underBase: false) { return (index, slash) }
            if let index = mount(origin: baseOrigin, path: mountPath, underBase: true) { return (index, slash) }
            return nil
        }
        guard let found else { return nil }
        return (found.index, Self.prefix(of: path, upTo: found.slash))
    }

    /// How many bytes of `path` come before its `(segments + 1)`-th `/`: a mount path has at
    /// most `segments`.
    private static func truncated(_ path: UnsafeBufferPointer<UInt8>, toSegments segments: Int) -> Int {
        var seen = 0
        for i in 0..<path.count where path[i] == UInt8(ascii: "/") {
            if seen == segments { return i }
            seen += 1
        }
        return path.count
    }

    /// `path` from UTF-8 offset `offset` (a `/` or the end, so a character boundary) on.
    private static func suffix(of path: String, from offset: Int) -> Substring {
        Substring(path.utf8[path.utf8.index(path.utf8.startIndex, offsetBy: offset)...])
    }

    private static func prefix(of path: String, upTo offset: Int) -> Substring {
        Substring(path.utf8[..<path.utf8.index(path.utf8.startIndex, offsetBy: offset)])
    }

    /// The number of the origin the client used (forwarded by the proxy, else `Host` over http),
    /// or nil when no mount has that origin.
    private func origin(of request: HTTPRequest) -> Int32? {
        let headers = request.routingHeaders
        // The usual request: no proxy headers and `Host` the base URL's authority as written,
        // the base origin without lower-casing, hashing and probing (measured: see
        // docs/performance.md).
        if headers.forwardedHost == nil && headers.forwardedProto == nil, let host = headers.host, host == baseHTTPAuthority {
            return baseOrigin
        }
        guard let host = headers.forwardedHost.map(Self.firstValue) ?? headers.host else { return nil }
        return origins.find(scheme: headers.forwardedProto.map(Self.firstValue) ?? "http", authority: host)
    }

    /// `HTTPRequest.firstValue` as a string: the header itself when it is a single value.
    private static func firstValue(_ header: String) -> String {
        let value = HTTPRequest.firstValue(header)
        return value.utf8.count == header.utf8.count ? header : String(value)
    }

    /// Scheme, authority and path (without trailing slashes; "" for an origin) of an absolute
    /// URL, and how many trailing slashes were cut.
    static func split(_ url: String) -> (scheme: String, authority: String, path: String, trailing: Int) {
        guard let schemeEnd = url.firstRange(of: "://") else { return ("", "", url, 0) }
        let scheme = String(url[..<schemeEnd.lowerBound])
        let afterScheme = url[schemeEnd.upperBound...]
        guard let slash = afterScheme.firstIndex(of: "/") else { return (scheme, String(afterScheme), "", 0) }
        var path = String(afterScheme[slash...])
        var trailing = 0
        while path.hasSuffix("/") {
            path.removeLast()
            trailing += 1
        }
        return (scheme, String(afterScheme[..<slash]), path, trailing)
    }
}
