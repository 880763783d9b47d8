/// The error codes of OpenID Federation 1.0 section 8.9, each with the HTTP status the spec gives it.
public enum FederationError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidRequest(String)
    case invalidClient(String)
    case invalidIssuer(String)
    case invalidSubject(String)
    case invalidTrustAnchor(String)
    case invalidTrustChain(String)
    case invalidMetadata(String)
    case notFound(String)
    case serverError(String)
    case temporarilyUnavailable(String)
    case unsupportedParameter(String)

    public var code: String {
        switch self {
        case .invalidRequest: return "invalid_request"
        case .invalidClient: return "invalid_client"
        case .invalidIssuer: return "invalid_issuer"
        case .invalidSubject: return "invalid_subject"
        case .invalidTrustAnchor: return "invalid_trust_anchor"
        case .invalidTrustChain: return "invalid_trust_chain"
        case .invalidMetadata: return "invalid_metadata"
        case .notFound: return "not_found"
        case .serverError: return "server_error"
        case .temporarilyUnavailable: return "temporarily_unavailable"
        case .unsupportedParameter: return "unsupported_parameter"
        }
    }

    public var httpStatus: Int {
        switch self {
        case .invalidRequest, .invalidTrustChain, .invalidMetadata, .unsupportedParameter: return 400
        case .invalidClient: return 401
        case .invalidIssuer, .invalidSubject, .invalidTrustAnchor, .notFound: return 404
        case .serverError: return 500
        case .temporarilyUnavailable: return 503
        }
    }

    public var message: String {
        switch self {
        case .invalidRequest(let m), .invalidClient(let m), .invalidIssuer(let m), .invalidSubject(let m),
             .invalidTrustAnchor(let m), .invalidTrustChain(let m), .invalidMetadata(let m), .notFound(let m),
             .serverError(let m), .temporarilyUnavailable(let m), .unsupportedParameter(let m):
            return m
        }
    }

    public var description: String { "\(code): \(message)" }
}
