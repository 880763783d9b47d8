/// Responses the server or a router gives on its own, before or instead of a handler.
enum BuiltinResponses {
    /// CORS preflight for a public path: any origin may call it with the headers wallets send
    /// (JSON bodies, bearer and DPoP tokens). Cached for a day.
    static func preflight(allow methods: String) -> HTTPResponse {
        HTTPResponse(
            status: .noContent,
            headers: [
                (name: "Access-Control-Allow-Origin", value: "*"),
                (name: "Access-Control-Allow-Methods", value: methods),
                (name: "Access-Control-Allow-Headers", value: "Content-Type, Authorization, DPoP"),
                (name: "Access-Control-Max-Age", value: "86400"),
            ])
    }

    /// 413 for a body over `limit`; the connection is closed afterwards because the rest of the
    /// body was not (or not usefully) read. Readable by any origin: no route was chosen yet.
    static func payloadTooLarge(limit: Int) -> HTTPResponse {
        ResponsePolicy.publicRead.apply(to: HTTPResponse.error(
            status: .payloadTooLarge, code: "invalid_request", description: "request body exceeds \(limit) bytes")
            .adding(header: "Connection", "close")).prepared()
    }

    /// 414 for a query of more than `limit` parameters, before any route runs. No endpoint takes
    /// nearly as many; the connection is closed, like for the other refusals made on the first call.
    static func tooManyQueryParameters(limit: Int) -> HTTPResponse {
        ResponsePolicy.publicRead.apply(to: HTTPResponse.error(
            status: .uriTooLong, code: "invalid_request",
            description: "the request target has more than \(limit) query parameters")
            .adding(header: "Connection", "close")).prepared()
    }

    /// 400 for an HTTP/1.1 request without Host (RFC 9112 §3.2). The connection is closed: the
    /// request was not read past its headers.
    static let missingHost = ResponsePolicy.publicRead.apply(to: HTTPResponse.error(
        status: .badRequest, code: "invalid_request", description: "an HTTP/1.1 request must carry a Host header")
        .adding(header: "Connection", "close")).prepared()

    /// A handler's answer the server cannot send (a deferred answer completed with another
    /// deferred one).
    static let internalError = ResponsePolicy.publicRead.apply(to: .error(
        status: .internalServerError, code: "server_error", description: "the server could not complete the request"))
}
