import HTTPClient
import Wallet

/// The load client's transport (benchmark-only): plain `http://` exchanges over a keep-alive
/// `PlainHTTPConnection` per origin, which costs a fraction of libcurl's CPU; any other URL
/// (https, user info) is left to libcurl. Not thread-safe; one per thread, like WalletHTTP.
public final class PlainHTTPTransport: WalletTransport {
    let timeoutSeconds: Int
    let maximumBytes: Int
    /// By authority (host:port as the URL spells it).
    private var connections: [String: PlainHTTPConnection] = [:]
    /// The request target and connection of the URLs sent to so far (up to `routeLimit`), by the
    /// URL as given: the load client sends to the same four URLs in every flow, so each is split
    /// once. Equal Strings sharing their storage, as these do, compare without reading their bytes.
    private var routes: [(url: String, target: String, connection: PlainHTTPConnection)] = []
    private static let routeLimit = 16

    public init(timeoutSeconds: Int = 30, maximumBytes: Int = 16 * 1024 * 1024) {
        self.timeoutSeconds = timeoutSeconds
        self.maximumBytes = maximumBytes
    }

    public func send(_ method: String, _ url: String, headers: [String], body: [UInt8]?) throws -> WalletHTTP.Reply? {
        guard let (target, connection) = route(url) else { return nil }
        let response = try connection.exchange(method: method, target: target, headers: headers, body: body)
        return WalletHTTP.Reply(status: response.status, body: response.body, headers: response.headers)
    }

    /// The request target of a plain `http://` URL and the connection to its origin; nil for
    /// any other URL.
    private func route(_ url: String) -> (target: String, connection: PlainHTTPConnection)? {
        if let known = routes.first(where: { $0.url == url }) { return (known.target, known.connection) }
        guard let parts = PlainURL(url) else { return nil }
        let connection: PlainHTTPConnection
        if let known = connections[parts.authority] {
            connection = known
        } else {
            connection = PlainHTTPConnection(host: parts.host, port: parts.port, authority: parts.authority,
                                             timeoutSeconds: timeoutSeconds, maximumBytes: maximumBytes,
                                             interesting: WalletHTTP.interestingHeaders)
            connections[parts.authority] = connection
        }
        if routes.count < Self.routeLimit { routes.append((url, parts.target, connection)) }
        return (parts.target, connection)
    }
}

/// An `http://` URL split for PlainHTTPConnection; nil for anything else (https, user info),
/// which then goes through libcurl.
struct PlainURL: Equatable {
    let host: String
    let port: String
    /// host[:port] as written, the Host header's value and the connection's key.
    let authority: String
    /// Path and query (RFC 9112 §3.2.1 origin-form), without the fragment.
    let target: String

    init(host: String, port: String, authority: String, target: String) {
        self.host = host
        self.port = port
        self.authority = authority
        self.target = target
    }

    /// Works on the UTF-8 bytes: Character-based String searching cost several times as much per URL.
    init?(_ url: String) {
        var url = url
        guard let parsed = url.withUTF8({ Self.split($0) }) else { return nil }
        self = parsed
    }

    private static func split(_ u: UnsafeBufferPointer<UInt8>) -> PlainURL? {
        let scheme = "http://".utf8
        guard u.count > scheme.count, zip(u, scheme).allSatisfy({ $0 == $1 }) else { return nil }
        let start = scheme.count
        let end = u[start...].firstIndex { $0 == 0x2F || $0 == 0x3F || $0 == 0x23 } ?? u.count  // / ? #
        let fragment = u[end...].firstIndex(of: 0x23) ?? u.count
        func text(_ range: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: u[range]), as: UTF8.self) }
        guard end > start, !u[start..<end].contains(0x40) else { return nil }  // no user info
        var target = text(end..<fragment)
        if target.isEmpty || u[end] == 0x3F { target = "/" + target }
        let host: Range<Int>, port: Range<Int>?
        if u[start] == 0x5B {  // [IPv6 literal]
            guard let close = u[start..<end].firstIndex(of: 0x5D) else { return nil }
            host = start..<(close + 1)
            guard close + 1 == end || u[close + 1] == 0x3A else { return nil }
            port = close + 1 == end ? nil : (close + 2)..<end
        } else if let colon = u[start..<end].lastIndex(of: 0x3A) {
            host = start..<colon
            port = (colon + 1)..<end
        } else {
            host = start..<end
            port = nil
        }
        let portText = port.map(text) ?? "80"
        guard !host.isEmpty, UInt16(portText) != nil else { return nil }
        return PlainURL(host: text(host), port: portText, authority: text(start..<end), target: target)
    }
}
