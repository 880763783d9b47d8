import HTTP

/// The verifier's errors render as OAuth JSON errors (`{"error", "error_description"}`); the
/// admin API's 401 names the Bearer scheme.
extension VerificationError: ErrorResponse {
    public var status: HTTPStatus { HTTPStatus(code: statusCode) }
    public var code: String { codeValue.rawValue }
    public var errorDescription: String { description }
    public var headers: [(name: String, value: String)] {
        codeValue == .unauthorized ? [("WWW-Authenticate", "Bearer")] : []
    }
}

extension Verifier {
    /// The admin API's check (`AdminAccess`), as the verifier's own error.
    public func authorizeAdmin(authorization: String?) throws(VerificationError) {
        do {
            try AdminAccess(tokenDigest: adminTokenDigest).check(authorization: authorization)
        } catch {
            throw VerificationError(.unauthorized, error.errorDescription)
        }
    }
}
