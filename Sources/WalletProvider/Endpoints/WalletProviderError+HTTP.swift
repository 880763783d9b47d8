import HTTP

/// The Wallet Provider's errors render as the IT-Wallet JSON errors
/// (`{"error", "error_description"}`, `Cache-Control: no-store` from the routes' policy).
extension WalletProviderError: ErrorResponse {
    public var status: HTTPStatus { HTTPStatus(code: statusCode) }
    public var code: String { codeValue.rawValue }
    public var errorDescription: String { description }
    public var headers: [(name: String, value: String)] {
        codeValue == .unauthorized ? [("WWW-Authenticate", "Bearer")] : []
    }
}
