/// Responses the server gives on its own, before or instead of a handler.
enum BuiltinResponses {
    static let allowedMethods = "GET, HEAD, POST, OPTIONS"

    static func methodNotAllowed(_ method: String) -> HTTPResponse {
        HTTPResponse.error(status: 405, code: "invalid_request", description: "method \(method) is not allowed")
            .adding(header: "Allow", allowedMethods)
    }

    /// CORS preflight: every endpoint is public, so any origin may call it with the headers
    /// wallets send (JSON bodies, bearer and DPoP tokens). Cached for a day.
    static let preflight = HTTPResponse(
        status: 204,
        headers: [
            (name: "Access-Control-Allow-Origin", value: "*"),
            (name: "Access-Control-Allow-Methods", value: allowedMethods),
            (name: "Access-Control-Allow-Headers", value: "Content-Type, Authorization, DPoP"),
            (name: "Access-Control-Max-Age", value: "86400"),
        ]).prepared()

    /// 413 for a body over `limit`; the connection is closed afterwards because the rest of the
    /// body was not (or not usefully) read.
    static func payloadTooLarge(limit: Int) -> HTTPResponse {
        HTTPResponse.error(status: 413, code: "invalid_request", description: "request body exceeds \(limit) bytes")
            .adding(header: "Connection", "close").prepared()
    }
}
