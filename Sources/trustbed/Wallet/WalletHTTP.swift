import CCurl
import Federation
import Foundation
import JSON
import Support

/// The wallet's HTTP client: one libcurl easy handle reused for every exchange, so its
/// connection cache keeps connections alive across requests (the load client gives each thread
/// its own session). Redirects are never followed: the authorization response arrives as a
/// redirect the wallet must read, not fetch. With `plainConnections` (the load client), plain
/// `http://` exchanges go over PlainHTTPConnection instead, a keep-alive socket per origin that
/// costs a fraction of libcurl's CPU; https stays with libcurl. Not thread-safe; one session per
/// thread.
final class WalletHTTP {
    struct Reply {
        let status: Int
        let body: [UInt8]
        /// Response header values by lowercased name (the first occurrence).
        let headers: HeaderFields
        var text: String { String(decoding: body, as: UTF8.self) }
        func header(_ name: String) -> String? { headers[name.lowercased()] }
        /// The body as a JSON object, or nil.
        var json: [String: JSONValue]? { (try? JSONValue.parse(body))?.objectValue }
        /// The body as a JSON object with only `members` in it, or nil when it is not a JSON
        /// object (checked whole all the same): for responses whose other members are not read.
        func json(_ members: ResponseJSON) -> [String: JSONValue]? { members.object(body) }
        var contentType: String {
            (header("content-type") ?? "").split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        }
    }

    private static let initializeOnce: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()
    /// Headers the wallet reads; curl_easy_header looks each up after the transfer.
    private static let interestingHeaders = ["Content-Type", "DPoP-Nonce", "Location", "WWW-Authenticate", "Cache-Control", "Retry-After"]

    private let curl: UnsafeMutableRawPointer
    let timeoutSeconds: Int
    let maximumBytes: Int
    let plainConnections: Bool
    /// By authority (host:port as the URL spells it).
    private var connections: [String: PlainHTTPConnection] = [:]
    /// The request target and connection of the URLs sent to so far (up to `routeLimit`), by the
    /// URL as given: the load client sends to the same four URLs in every flow, and splitting
    /// each again and hashing its authority cost 10,600 instructions per flow (callgrind). Equal
    /// Strings sharing their storage, as these do, compare without reading their bytes.
    private var routes: [(url: String, target: String, connection: PlainHTTPConnection)] = []
    private static let routeLimit = 16

    init(timeoutSeconds: Int = 30, maximumBytes: Int = 16 * 1024 * 1024, plainConnections: Bool = false) throws {
        _ = Self.initializeOnce
        guard let curl = curl_easy_init() else { throw WalletError.transport("libcurl could not start a transfer") }
        self.curl = curl
        self.timeoutSeconds = timeoutSeconds
        self.maximumBytes = maximumBytes
        self.plainConnections = plainConnections
    }

    deinit { curl_easy_cleanup(curl) }

    func get(_ url: String, accept: String = "application/json", headers: [String] = []) throws -> Reply {
        try send("GET", url, headers: ["Accept: \(accept)"] + headers)
    }

    func postForm(_ url: String, _ form: [(String, String)], headers: [String] = []) throws -> Reply {
        let body = Parameters(pairs: form.map { (name: $0.0, value: $0.1) }).encoded
        return try send("POST", url, headers: ["Content-Type: application/x-www-form-urlencoded", "Accept: application/json"] + headers,
                        body: Array(body.utf8))
    }

    func postJSON(_ url: String, _ json: JSONValue, headers: [String] = []) throws -> Reply {
        try send("POST", url, headers: ["Content-Type: application/json", "Accept: application/json"] + headers, body: json.bytes)
    }

    /// One exchange. `body` nil sends none (a POST without a body still says Content-Length: 0).
    func send(_ method: String, _ url: String, headers: [String] = [], body: [UInt8]? = nil) throws -> Reply {
        if plainConnections, let (target, connection) = route(url) {
            let response = try connection.exchange(method: method, target: target, headers: headers, body: body)
            return Reply(status: response.status, body: response.body, headers: response.headers)
        }
        return try sendWithCurl(method, url, headers: headers, body: body)
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
                                             interesting: Self.interestingHeaders)
            connections[parts.authority] = connection
        }
        if routes.count < Self.routeLimit { routes.append((url, parts.target, connection)) }
        return (parts.target, connection)
    }

    private func sendWithCurl(_ method: String, _ url: String, headers: [String], body: [UInt8]?) throws -> Reply {
        // Reset clears the options of the previous request but keeps the connection cache.
        curl_easy_reset(curl)
        var list: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(list) }
        // libcurl adds "Expect: 100-continue" to larger POSTs, which costs a round trip.
        for header in headers + ["Expect:"] { list = curl_slist_append(list, header) }
        let sink = CurlBodySink(limit: maximumBytes)
        var ok = trustbed_curl_set_string(curl, CURLOPT_URL, url) == CURLE_OK
        ok = ok && trustbed_curl_set_long(curl, CURLOPT_NOSIGNAL, 1) == CURLE_OK
        ok = ok && trustbed_curl_set_string(curl, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK
        ok = ok && trustbed_curl_set_long(curl, CURLOPT_FOLLOWLOCATION, 0) == CURLE_OK
        ok = ok && trustbed_curl_set_long(curl, CURLOPT_TIMEOUT_MS, timeoutSeconds * 1000) == CURLE_OK
        ok = ok && trustbed_curl_set_long(curl, CURLOPT_TCP_NODELAY, 1) == CURLE_OK
        ok = ok && trustbed_curl_set_string(curl, CURLOPT_USERAGENT, "trustbed-wallet") == CURLE_OK
        if method == "POST" {
            ok = ok && trustbed_curl_set_long(curl, CURLOPT_POST, 1) == CURLE_OK
        } else if method != "GET" {
            ok = ok && trustbed_curl_set_string(curl, CURLOPT_CUSTOMREQUEST, method) == CURLE_OK
        }
        if let list { ok = ok && trustbed_curl_set_pointer(curl, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list)) == CURLE_OK }
        if method == "POST" || body != nil {
            let bytes = body ?? []
            ok = ok && trustbed_curl_set_long(curl, CURLOPT_POSTFIELDSIZE, bytes.count) == CURLE_OK
            // COPYPOSTFIELDS copies `bytes.count` bytes (set just above), so the buffer may go.
            ok = ok && bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    trustbed_curl_set_pointer(curl, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress ?? UnsafePointer(strdupEmpty)))
                }
            } == CURLE_OK
        }
        ok = ok && sink.install(on: curl)
        guard ok else { throw WalletError.transport("libcurl refused an option for \(url)") }
        let code = withExtendedLifetime(sink) { curl_easy_perform(curl) }
        if sink.overflowed { throw WalletError.transport("\(method) \(url): response larger than \(maximumBytes) bytes") }
        guard code == CURLE_OK else {
            throw WalletError.transport("\(method) \(url): \(String(cString: curl_easy_strerror(code)))")
        }
        var found = HeaderFields()
        for name in Self.interestingHeaders {
            var header: UnsafeMutablePointer<curl_header>?
            if curl_easy_header(curl, name, 0, UInt32(CURLH_HEADER), -1, &header) == CURLHE_OK, let header, let value = header.pointee.value {
                found.add(name.lowercased(), String(cString: value))
            }
        }
        return Reply(status: trustbed_curl_response_code(curl), body: sink.bytes, headers: found)
    }
}

/// Response header values by lowercased name, the first occurrence of each: the few the wallet
/// reads (WalletHTTP.interestingHeaders), two or three per response, kept in an array searched
/// by name instead of a dictionary that hashed every name on insert and on lookup: 489,800 ->
/// 479,100 instructions per SD-JWT flow of the load client (callgrind).
struct HeaderFields {
    private var fields: [(name: String, value: String)] = []

    subscript(lowercasedName: String) -> String? { fields.first { $0.name == lowercasedName }?.value }

    /// Keeps the first value given for a name.
    mutating func add(_ lowercasedName: String, _ value: String) {
        if self[lowercasedName] == nil { fields.append((lowercasedName, value)) }
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

    /// Works on the UTF-8 bytes: Character-based String searching cost 30,000 instructions a URL.
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

/// A valid pointer for an empty body (libcurl reads zero bytes from it).
private nonisolated(unsafe) let strdupEmpty: UnsafeMutablePointer<CChar> = strdup("")!
