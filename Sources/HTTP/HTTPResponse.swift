import JSON

/// What a handler answers. Headers are an ordered list because a name may repeat and order is
/// what the client sees.
public struct HTTPResponse: Sendable {
    // A change after `prepared()` drops the prepared form, which no longer matches.
    public var status: Int { didSet { wire = nil; reusableUntil = nil } }
    public var headers: [(name: String, value: String)] { didSet { wire = nil; reusableUntil = nil } }
    public var body: [UInt8] { didSet { wire = nil; reusableUntil = nil } }
    /// Set by `prepared()`: the server queues this instead of building a response.
    private(set) var wire: PreparedResponse?
    /// Set by `reusable(until:)`: see `ResponseMemo`.
    public private(set) var reusableUntil: Int64?

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [(name: "Content-Type", value: "application/json")], body: value.bytes)
    }

    public static func text(
        _ text: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8"
    ) -> HTTPResponse {
        HTTPResponse(status: status, headers: [(name: "Content-Type", value: contentType)], body: Array(text.utf8))
    }

    /// A compact JWS/JWT, e.g. with `application/entity-statement+jwt`.
    public static func jwt(_ compact: String, contentType: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [(name: "Content-Type", value: contentType)], body: Array(compact.utf8))
    }

    /// `{"error": code, "error_description": description}` as application/json, the error
    /// format OAuth 2.0, OpenID4VCI and OpenID Federation share.
    public static func error(status: Int, code: String, description: String) -> HTTPResponse {
        .json(["error": .string(code), "error_description": .string(description)], status: status)
    }

    /// This response with its wire form built once, for a value kept and served many times.
    /// Serving it then costs no copy and no allocation.
    public func prepared() -> HTTPResponse {
        var copy = self
        copy.wire = PreparedResponse(self)
        return copy
    }

    /// This response (if its status is 200) may also answer identical GET/HEAD requests for up
    /// to a second, but not at or after `until` (seconds since 1970), unless the server's memo is
    /// cleared first. For answers that depend only on the path, the query and the routing
    /// headers, such as a cached signed statement. See `ResponseMemo`.
    public func reusable(until: Int64) -> HTTPResponse {
        var copy = self
        copy.reusableUntil = until
        return copy
    }

    public func adding(header name: String, _ value: String) -> HTTPResponse {
        var copy = self
        copy.headers.append((name: name, value: value))
        return copy
    }

    /// First value of a header by case-insensitive name.
    public func header(_ name: String) -> String? {
        headers.first { ASCII.equalsIgnoringCase($0.name, name) }?.value
    }
}
