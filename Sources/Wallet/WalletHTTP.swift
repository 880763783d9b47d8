import Foundation
import HTTPClient
import JSON
import Support

/// Another way to send some of the wallet's exchanges: the load client (`WalletBench`) sends plain
/// `http://` ones over its own keep-alive connections. Answers nil for a URL it does not take,
/// which then goes through libcurl.
public protocol WalletTransport: AnyObject {
    func send(_ method: String, _ url: String, headers: [String], body: [UInt8]?) throws -> WalletHTTP.Reply?
}

/// The wallet's HTTP client: one `HTTPClient` (a libcurl handle) reused for every exchange, so
/// connections stay alive across requests. Redirects are never followed: the authorization
/// response arrives as a redirect the wallet must read, not fetch. Not thread-safe; one per
/// thread.
public final class WalletHTTP {
    public struct Reply {
        public let status: Int
        public let body: [UInt8]
        /// Response header values by lowercased name (the first occurrence).
        public let headers: HeaderFields

        public init(status: Int, body: [UInt8], headers: HeaderFields) {
            self.status = status
            self.body = body
            self.headers = headers
        }

        public var text: String { String(decoding: body, as: UTF8.self) }
        public func header(_ name: String) -> String? { headers[name.lowercased()] }
        /// The body as a JSON object, or nil.
        public var json: [String: JSONValue]? { (try? JSONValue.parse(body))?.objectValue }
        /// The body as a JSON object with only `members` in it, or nil when it is not a JSON
        /// object (checked whole all the same): for responses whose other members are not read.
        public func json(_ members: ResponseJSON) -> [String: JSONValue]? { members.object(body) }
        public var contentType: String {
            (header("content-type") ?? "").split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        }
    }

    /// Headers the wallet reads.
    public static let interestingHeaders = ["Content-Type", "DPoP-Nonce", "Location", "WWW-Authenticate", "Cache-Control", "Retry-After"]

    private let client: HTTPClient
    public let timeoutSeconds: Int
    public let maximumBytes: Int
    /// Tried first for every exchange (the load client's plain connections); nil: libcurl only.
    public let transport: WalletTransport?
    /// `--verbose`: receives each request and response (`WalletTrace`); nil logs nothing.
    public var trace: ((String) -> Void)?

    public init(timeoutSeconds: Int = 30, maximumBytes: Int = 16 * 1024 * 1024, transport: WalletTransport? = nil) throws {
        do {
            client = try HTTPClient(timeout: Double(timeoutSeconds), maxBytes: maximumBytes, userAgent: "trustbed-wallet",
                                    headersToRead: Self.interestingHeaders)
        } catch { throw WalletError.transport("\(error)") }
        self.timeoutSeconds = timeoutSeconds
        self.maximumBytes = maximumBytes
        self.transport = transport
    }

    public func get(_ url: String, accept: String = "application/json", headers: [String] = []) throws -> Reply {
        try send("GET", url, headers: ["Accept: \(accept)"] + headers)
    }

    public func postForm(_ url: String, _ form: [(String, String)], headers: [String] = []) throws -> Reply {
        let body = Parameters(pairs: form.map { (name: $0.0, value: $0.1) }).encoded
        return try send("POST", url, headers: ["Content-Type: application/x-www-form-urlencoded", "Accept: application/json"] + headers,
                        body: Array(body.utf8))
    }

    public func postJSON(_ url: String, _ json: JSONValue, headers: [String] = []) throws -> Reply {
        try send("POST", url, headers: ["Content-Type: application/json", "Accept: application/json"] + headers, body: json.bytes)
    }

    /// One exchange. `body` nil sends none (a POST without a body still says Content-Length: 0).
    public func send(_ method: String, _ url: String, headers: [String] = [], body: [UInt8]? = nil) throws -> Reply {
        guard let trace else { return try sendUntraced(method, url, headers: headers, body: body) }
        trace(WalletTrace.request(method, url, headers: headers, body: body))
        let reply = try sendUntraced(method, url, headers: headers, body: body)
        trace(WalletTrace.response(reply))
        return reply
    }

    private func sendUntraced(_ method: String, _ url: String, headers: [String], body: [UInt8]?) throws -> Reply {
        if let transport, let reply = try transport.send(method, url, headers: headers, body: body) { return reply }
        do {
            let response = try client.send(method, url, headers: headers, body: body)
            return Reply(status: response.status, body: response.body, headers: response.headers)
        } catch {
            throw WalletError.transport("\(method) \(url): \(error)")
        }
    }
}
