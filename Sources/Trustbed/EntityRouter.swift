import Foundation
import HTTP

/// Maps a request to the hosted entity whose ID is the longest prefix of the request URL
/// (DESIGN "Entities and URLs"). The URL is rebuilt from `X-Forwarded-Proto`/`X-Forwarded-Host`
/// or `Host`, so entities with their own absolute `entity_id` are routed by host behind a proxy;
/// entities under the base URL also match by path alone, whatever name the client used for us.
///
/// Every request passes through here, so entities are grouped by authority up front: a request
/// costs one dictionary lookup and a few prefix checks, not a scan that builds strings.
struct EntityRouter: Sendable {
    private struct Route: Sendable { let scheme: String; let path: String; let entityID: String }
    /// Lower-cased authority ("host:port") → routes on it, longest path first.
    private let byAuthority: [String: [Route]]
    /// Entities under the base URL by their path there, longest first.
    private let underBase: [Route]

    init(entityIDs: [String], baseURL: String) {
        let basePath = Self.split(baseURL).path
        var byAuthority: [String: [Route]] = [:]
        var underBase: [Route] = []
        for id in entityIDs {
            let (scheme, authority, path) = Self.split(id)
            byAuthority[authority.lowercased(), default: []].append(Route(scheme: scheme.lowercased(), path: path, entityID: id))
            if id.hasPrefix(baseURL + "/") {
                underBase.append(Route(scheme: "", path: basePath + String(id.dropFirst(baseURL.count)), entityID: id))
            }
        }
        let longestFirst = { (a: Route, b: Route) in a.path.utf8.count > b.path.utf8.count }
        self.byAuthority = byAuthority.mapValues { $0.sorted(by: longestFirst) }
        self.underBase = underBase.sorted(by: longestFirst)
    }

    /// The entity and the rest of the path (e.g. "/fetch"), or nil.
    func match(_ request: HTTPRequest) -> (entityID: String, rest: Substring)? {
        let path = request.path
        if let host = request.header("x-forwarded-host").map(Self.firstValue) ?? request.header("host")?[...],
           let routes = byAuthority[Self.lowercased(host)] {
            let scheme = Self.lowercased(request.header("x-forwarded-proto").map(Self.firstValue) ?? "http")
            for r in routes where r.scheme == scheme {
                if let rest = Self.rest(of: path, after: r.path) { return (r.entityID, rest) }
            }
        }
        for r in underBase { if let rest = Self.rest(of: path, after: r.path) { return (r.entityID, rest) } }
        return nil
    }

    /// Scheme and host compare case-insensitively (RFC 3986 §3.1, §3.2.2); clients almost always
    /// send them lower-cased already, and then this costs no allocation for short names.
    private static func lowercased(_ text: Substring) -> String {
        let upper = text.utf8.withContiguousStorageIfAvailable { bytes in bytes.contains { $0 >= 0x41 && $0 <= 0x5A } } ?? true
        return upper ? text.lowercased() : String(text)
    }

    /// What follows `prefix` in `path`, when `prefix` ends at a path segment boundary.
    private static func rest(of path: String, after prefix: String) -> Substring? {
        // A byte comparison of contiguous storage: the generic `starts(with:)` over two UTF-8
        // views cost more than the rest of the routing.
        var path = path
        var prefix = prefix
        let count = prefix.utf8.count
        let matches = path.withUTF8 { text in
            prefix.withUTF8 { head in
                text.count >= count && (text.count == count || text[count] == UInt8(ascii: "/"))
                    && (count == 0 || memcmp(text.baseAddress!, head.baseAddress!, count) == 0)
            }
        }
        return matches ? Substring(path.utf8.dropFirst(count)) : nil
    }

    /// The first of a comma-separated list of forwarded values, trimmed (proxies append theirs).
    private static func firstValue(_ header: String) -> Substring {
        var value = header[...]
        if let comma = value.firstIndex(of: ",") { value = value[..<comma] }
        while value.first == " " || value.first == "\t" { value.removeFirst() }
        while value.last == " " || value.last == "\t" { value.removeLast() }
        return value
    }

    /// Scheme, authority and path (without trailing slashes; "" for an origin) of an absolute URL.
    static func split(_ url: String) -> (scheme: String, authority: String, path: String) {
        guard let schemeEnd = url.range(of: "://") else { return ("", "", url) }
        let scheme = String(url[..<schemeEnd.lowerBound])
        let afterScheme = url[schemeEnd.upperBound...]
        guard let slash = afterScheme.firstIndex(of: "/") else { return (scheme, String(afterScheme), "") }
        var path = String(afterScheme[slash...])
        while path.hasSuffix("/") { path.removeLast() }
        return (scheme, String(afterScheme[..<slash]), path)
    }
}
