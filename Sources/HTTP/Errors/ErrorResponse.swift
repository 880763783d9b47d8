import Support

/// An error that knows its HTTP answer: `{"error": code, "error_description": ...}` as
/// application/json with `status`, the format OAuth 2.0 (RFC 6749 §5.2), OpenID4VCI and OpenID
/// Federation (§8.9) share. Domain errors conform in their module's `Endpoints/` folder, so a
/// handler simply throws them. `headers` carries extras such as `WWW-Authenticate` (RFC 6750 §3)
/// or `DPoP-Nonce` (RFC 9449 §8).
public protocol ErrorResponse: Error {
    var status: HTTPStatus { get }
    var code: String { get }
    var errorDescription: String { get }
    var headers: [(name: String, value: String)] { get }
}

extension ErrorResponse {
    public var headers: [(name: String, value: String)] { [] }

    /// The JSON error response.
    public var response: HTTPResponse {
        var response = HTTPResponse.error(status: status, code: code, description: errorDescription)
        response.headers.append(contentsOf: headers)
        return response
    }
}

/// A refused query or form parameter is the client's mistake: 400 `invalid_request`.
extension ParameterError: ErrorResponse {
    public var status: HTTPStatus { .badRequest }
    public var code: String { "invalid_request" }
    public var errorDescription: String { description }
}

/// An error answered by sending the user agent back to the client, as the OAuth authorization
/// endpoint must once the redirect URI is known to be valid (RFC 6749 §4.1.2.1): `target` with
/// `error`, `error_description`, `state` (when the request had one) and `iss` (RFC 9207 §2)
/// added to its query. Thrown from a handler, it renders as that redirect.
public struct RedirectedError: Error {
    public var error: any ErrorResponse
    public var target: String
    public var state: String?
    public var issuer: String?
    /// 302 after a GET; 303 after a form POST, so the browser follows with a GET.
    public var status: HTTPStatus

    public init(_ error: any ErrorResponse, target: String, state: String? = nil, issuer: String? = nil,
                status: HTTPStatus = .found) {
        self.error = error
        self.target = target
        self.state = state
        self.issuer = issuer
        self.status = status
    }

    public var response: HTTPResponse {
        var parameters = [("error", error.code), ("error_description", ErrorDescription.sanitized(error.errorDescription))]
        if let state { parameters.append(("state", state)) }
        if let issuer { parameters.append(("iss", issuer)) }
        return .redirect(to: target, adding: parameters, status: status)
    }
}

/// Turns whatever a handler threw into its answer. Anything that does not describe itself is a
/// bug on our side: 500 `server_error` (RFC 6749 §4.1.2.1 names that code) without detail, so
/// nothing internal leaks; the server logs the error itself (`HTTPResponse.failure`).
enum ErrorRendering {
    static func response(for error: any Error) -> HTTPResponse {
        if let redirected = error as? RedirectedError { return redirected.response }
        if let described = error as? any ErrorResponse { return described.response }
        var response = HTTPResponse.error(
            status: .internalServerError, code: "server_error", description: "the server could not complete the request")
        response.failure = String(describing: error)
        return response
    }
}
