import CCurl
import Support
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Outgoing HTTP(S) through libcurl's easy interface, for the federation resolver's fetcher and
/// the CLI wallet: every exchange within a timeout, every response body cut off at a byte limit
/// while it arrives, http and https only, redirects never followed (the caller decides: the
/// resolver checks each target against its allow-list first, the wallet reads an authorization
/// response from its `Location`). One easy handle per client, reused for every exchange so its
/// connection cache keeps connections alive; blocking, and not thread-safe: one client per thread.
///
/// libcurl rather than Foundation's URLSession: on Linux URLSession kept about 1.4 cores busy
/// while 32 transfers waited on a slow host (its dispatch-driven multi handle), which halved the
/// throughput of every other request; an easy transfer waits asleep in poll(2).
public final class HTTPClient {
    public struct Response: Sendable {
        public let status: Int
        public let body: [UInt8]
        /// The values of the headers named in `HTTPClient.headersToRead`, by lowercased name.
        public let headers: HeaderFields
        /// For a 3xx answer: the URL it redirects to (resolved against the request URL), if any.
        public let redirectURL: String?

        public init(status: Int, body: [UInt8], headers: HeaderFields, redirectURL: String? = nil) {
            self.status = status
            self.body = body
            self.headers = headers
            self.redirectURL = redirectURL
        }

        public var text: String { String(decoding: body, as: UTF8.self) }
        public func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    public enum Failure: Error, CustomStringConvertible, Sendable {
        /// The body passed `limit` bytes; the transfer was aborted there.
        case tooLarge(limit: Int)
        case timedOut
        case failed(String)

        public var description: String {
            switch self {
            case .tooLarge(let limit): return "response larger than \(limit) bytes"
            case .timedOut: return "timed out"
            case .failed(let why): return why
            }
        }
    }

    /// libcurl's global set-up is not thread-safe; it runs once, before the first handle exists.
    private static let initializeOnce: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    private let curl: UnsafeMutableRawPointer
    /// Seconds an exchange may take (connecting included) unless `send` is given less.
    public let timeout: Double
    public let maxBytes: Int
    public let userAgent: String
    /// Response headers the caller reads; curl_easy_header looks each up after the transfer.
    public let headersToRead: [String]

    public init(timeout: Double = 30, maxBytes: Int = 16 << 20, userAgent: String = "trustbed",
                headersToRead: [String] = []) throws(Failure) {
        _ = Self.initializeOnce
        guard let curl = curl_easy_init() else { throw .failed("libcurl could not start a transfer") }
        self.curl = curl
        self.timeout = timeout
        self.maxBytes = maxBytes
        self.userAgent = userAgent
        self.headersToRead = headersToRead
    }

    deinit { curl_easy_cleanup(curl) }

    /// One exchange. `body` nil sends none; a POST without one still says Content-Length: 0.
    /// `timeout` nil uses the client's; a smaller one (what is left of a caller's deadline) wins.
    public func send(_ method: String, _ url: String, headers: [String] = [], body: [UInt8]? = nil,
                     timeout: Double? = nil) throws(Failure) -> Response {
        // Reset clears the options of the previous request but keeps the connection cache.
        curl_easy_reset(curl)
        var list: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(list) }
        // libcurl adds "Expect: 100-continue" to larger POSTs, which costs a round trip.
        for header in headers + ["Expect:"] { list = curl_slist_append(list, header) }
        let sink = CurlBodySink(limit: maxBytes)
        let millis = max(1, Int(min(timeout ?? self.timeout, self.timeout) * 1000))
        var ok = trustbed_curl_set_string(curl, CURLOPT_URL, url) == CURLE_OK
        // Threads share no signal handling with libcurl; http(s) only, also for redirects.
        ok = ok && trustbed_curl_set_long(curl, CURLOPT_NOSIGNAL, 1) == CURLE_OK
        ok = ok && trustbed_curl_set_string(curl, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK
        ok = ok && trustbed_curl_set_long(curl, CURLOPT_FOLLOWLOCATION, 0) == CURLE_OK
        ok = ok && trustbed_curl_set_long(curl, CURLOPT_TIMEOUT_MS, millis) == CURLE_OK
        ok = ok && trustbed_curl_set_long(curl, CURLOPT_CONNECTTIMEOUT_MS, millis) == CURLE_OK
        ok = ok && trustbed_curl_set_long(curl, CURLOPT_MAXFILESIZE_LARGE, maxBytes) == CURLE_OK
        ok = ok && trustbed_curl_set_long(curl, CURLOPT_TCP_NODELAY, 1) == CURLE_OK
        ok = ok && trustbed_curl_set_string(curl, CURLOPT_USERAGENT, userAgent) == CURLE_OK
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
                    trustbed_curl_set_pointer(curl, CURLOPT_COPYPOSTFIELDS,
                                              UnsafeMutableRawPointer(mutating: $0.baseAddress ?? UnsafePointer(emptyBody)))
                }
            } == CURLE_OK
        }
        ok = ok && sink.install(on: curl)
        guard ok else { throw .failed("libcurl refused an option for \(url)") }
        let code = withExtendedLifetime(sink) { curl_easy_perform(curl) }
        if sink.overflowed || code == CURLE_FILESIZE_EXCEEDED { throw .tooLarge(limit: maxBytes) }
        switch code {
        case CURLE_OK: break
        case CURLE_OPERATION_TIMEDOUT: throw .timedOut
        default: throw .failed(String(cString: curl_easy_strerror(code)))
        }
        var found = HeaderFields()
        for name in headersToRead {
            var header: UnsafeMutablePointer<curl_header>?
            if curl_easy_header(curl, name, 0, UInt32(CURLH_HEADER), -1, &header) == CURLHE_OK, let header, let value = header.pointee.value {
                found.add(name.lowercased(), String(cString: value))
            }
        }
        let status = trustbed_curl_response_code(curl)
        let redirect = (300..<400).contains(status) ? trustbed_curl_redirect_url(curl).map { String(cString: $0) } : nil
        return Response(status: status, body: sink.bytes, headers: found, redirectURL: redirect)
    }

    public func get(_ url: String, headers: [String] = [], timeout: Double? = nil) throws(Failure) -> Response {
        try send("GET", url, headers: headers, timeout: timeout)
    }

    /// An `application/x-www-form-urlencoded` POST.
    public func postForm(_ url: String, _ form: [(name: String, value: String)], headers: [String] = [],
                         timeout: Double? = nil) throws(Failure) -> Response {
        try send("POST", url, headers: ["Content-Type: application/x-www-form-urlencoded"] + headers,
                 body: Array(Parameters(pairs: form).encoded.utf8), timeout: timeout)
    }
}

/// Response header values by lowercased name, the first occurrence of each: the few a caller
/// reads, two or three per response, kept in an array searched by name (cheaper than hashing
/// every name on insert and lookup).
public struct HeaderFields: Sendable {
    private var fields: [(name: String, value: String)] = []

    public init() {}

    public subscript(lowercasedName: String) -> String? { fields.first { $0.name == lowercasedName }?.value }

    /// Keeps the first value given for a name.
    public mutating func add(_ lowercasedName: String, _ value: String) {
        if self[lowercasedName] == nil { fields.append((lowercasedName, value)) }
    }
}

/// A valid pointer for an empty body (libcurl reads zero bytes from it).
private nonisolated(unsafe) let emptyBody: UnsafeMutablePointer<CChar> = strdup("")!
