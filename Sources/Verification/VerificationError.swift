import Store

/// Every refusal of the verifier: a response the verifier refuses at its `response_uri`, or a
/// request object fetch it cannot answer, is OAuth's 400 `invalid_request` with the reason
/// (OpenID4VP 1.0 §8.2 leaves the format to OAuth); Trustbed's own codes cover the admin API
/// and pages (`not_found`, `unauthorized`).
/// Rendered by `Endpoints/`.
public struct VerificationError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case invalidRequest = "invalid_request"
        case notFound = "not_found"
        case unauthorized = "unauthorized"
        case serverError = "server_error"
        case temporarilyUnavailable = "temporarily_unavailable"
    }

    public let codeValue: Code
    public let description: String
    /// For `server_error`: what failed, for the operator's log only.
    public var cause: String?

    public init(_ code: Code, _ description: String, cause: String? = nil) {
        codeValue = code
        self.description = description
        self.cause = cause
    }

    public static func invalidRequest(_ why: String) -> VerificationError { .init(.invalidRequest, why) }
    public static func notFound(_ why: String) -> VerificationError { .init(.notFound, why) }

    public var statusCode: Int {
        switch codeValue {
        case .invalidRequest: 400
        case .notFound: 404
        case .unauthorized: 401
        case .serverError: 500
        case .temporarilyUnavailable: 503
        }
    }

    /// A failed store is the server's fault (500), or a busy one (503), never the client's.
    public static func store(_ error: StoreError) -> VerificationError {
        if case .sqlite(let code, _) = error, code == 5 || code == 6 {
            return VerificationError(.temporarilyUnavailable, "the database is busy; retry", cause: "\(error)")
        }
        return VerificationError(.serverError, "the verifier could not store the request", cause: "\(error)")
    }
}
