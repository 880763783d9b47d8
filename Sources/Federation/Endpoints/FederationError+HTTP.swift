import HTTP

/// Section 8.9: every federation endpoint answers errors as `{"error", "error_description"}`
/// with the status the code carries.
extension FederationError: ErrorResponse {
    public var status: HTTPStatus { HTTPStatus(code: httpStatus) }
    public var errorDescription: String { message }
}
