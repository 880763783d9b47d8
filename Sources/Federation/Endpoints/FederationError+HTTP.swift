import HTTP

extension FederationError {
    /// The JSON error body of section 8.9 with the status the spec gives the code.
    public var response: HTTPResponse {
        HTTPResponse.error(status: status, code: code, description: message)
    }
}
