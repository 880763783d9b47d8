import JSON

/// What a handler answers. Headers are an ordered list because a name may repeat and order is
/// what the client sees.
public struct HTTPResponse: Sendable {
    // A change after `prepared()` drops the prepared form, which no longer matches.
    public var status: HTTPStatus { didSet { invalidate() } }
    public var headers: [(name: String, value: String)] { didSet { invalidate() } }
    public var body: [UInt8] { didSet { invalidate() } }
    /// Set by `prepared()`: the server queues this instead of building a response.
    private(set) var wire: PreparedResponse?
    /// Set by `reusable(until:)`: see `ResponseMemo`.
    public private(set) var reusableUntil: Int64?
    /// The policy whose headers this response already carries (`applying(_:)`), so a router
    /// does not add them again and a prepared response stays prepared.
    public internal(set) var appliedPolicy: ResponsePolicy?
    /// Set by `deferred(_:)`: the server suspends the connection and runs this.
    let deferredStart: (@Sendable (ResponseCompletion) -> Void)?
    /// Why a handler failed, for the server's error log; never sent (see `ErrorRendering`).
    var failure: String?

    public init(status: HTTPStatus, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
        self.deferredStart = nil
    }

    private init(deferred start: @escaping @Sendable (ResponseCompletion) -> Void) {
        status = .ok
        headers = []
        body = []
        deferredStart = start
    }

    private mutating func invalidate() {
        wire = nil
        reusableUntil = nil
        appliedPolicy = nil
    }

    public static func json(_ value: JSONValue, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: [(name: "Content-Type", value: "application/json")], body: value.bytes)
    }

    public static func text(
        _ text: String, status: HTTPStatus = .ok, contentType: String = "text/plain; charset=utf-8"
    ) -> HTTPResponse {
        HTTPResponse(status: status, headers: [(name: "Content-Type", value: contentType)], body: Array(text.utf8))
    }

    /// A compact JWS/JWT, e.g. with `application/entity-statement+jwt`.
    public static func jwt(_ compact: String, contentType: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: [(name: "Content-Type", value: contentType)], body: Array(compact.utf8))
    }

    /// `{"error": code, "error_description": description}` as application/json, the error
    /// format OAuth 2.0, OpenID4VCI and OpenID Federation share; the description limited to
    /// the characters RFC 6749 §5.2 allows (`ErrorDescription`).
    public static func error(status: HTTPStatus, code: String, description: String) -> HTTPResponse {
        .json(["error": .string(code), "error_description": .string(ErrorDescription.sanitized(description))], status: status)
    }

    /// An answer that is not ready yet because it waits on another host (a remote statement, a
    /// wallet's callback). The server suspends the connection, so the worker thread serves
    /// other requests meanwhile, and calls `start` on that worker. `start` must hand the work to
    /// another thread and return at once; that thread calls `complete(response)` (or
    /// `complete.fail(error)`) exactly once, from any thread. Policy headers, error rendering
    /// and the access log apply to the final answer as to any other. Never memoized.
    public static func deferred(_ start: @escaping @Sendable (ResponseCompletion) -> Void) -> HTTPResponse {
        HTTPResponse(deferred: start)
    }

    public var isDeferred: Bool { deferredStart != nil }

    /// This response with its wire form built once, for a value kept and served many times.
    /// Serving it then costs no copy and no allocation. Apply the route's policy first
    /// (`applying(_:)`), or the router's headers would unprepare it on every request.
    public func prepared() -> HTTPResponse {
        var copy = self
        copy.wire = PreparedResponse(self)
        return copy
    }

    /// This response (if its status is 200) may also answer identical GET/HEAD requests for up
    /// to a second, but not at or after `until` (seconds since 1970), unless the server's memo is
    /// cleared first. For answers that depend only on the path, the query and the routing
    /// headers, such as a cached signed statement. A router keeps the mark only on routes
    /// declared with `memo: true`. See `ResponseMemo`.
    ///
    /// This and the other steps a response passes on its way to the server (`notReusable()`,
    /// `ResponsePolicy.apply(to:)`) consume it: each copy of a response retains its header
    /// list, which for answers built from one made once (`replacingBody(_:)`) every worker
    /// thread shares. Borrowed, a cached `fetch` copied its answer at each step; consumed, only
    /// `replacingBody(_:)` does.
    public consuming func reusable(until: Int64) -> HTTPResponse {
        reusableUntil = until
        return self
    }

    /// The same response without the memo mark.
    consuming func notReusable() -> HTTPResponse {
        reusableUntil = nil
        return self
    }

    /// This response with another body, its headers, policy and memo mark kept (the policy's
    /// headers do not depend on the body): for answers that differ only in their body, built
    /// from one made once, e.g. `.jwt("", contentType: t).applying(.publicRead)`, so the
    /// policy's headers are not added to each answer again. Not for a prepared response: that
    /// is dropped.
    public func replacingBody(_ body: [UInt8]) -> HTTPResponse {
        var copy = self
        copy.body = body
        copy.reusableUntil = reusableUntil
        copy.appliedPolicy = appliedPolicy
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

    /// Whether a header is present, by case-insensitive name.
    public func hasHeader(_ name: String) -> Bool {
        headers.contains { ASCII.equalsIgnoringCase($0.name, name) }
    }
}
