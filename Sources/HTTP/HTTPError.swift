import JSON

/// Why a request could not be turned into what a handler asked for. Each case maps to one
/// status code, so a handler can answer with `error.response`.
public enum HTTPError: Error, Equatable, Sendable {
    case badRequest(String)
    case unsupportedMediaType(String)
    case payloadTooLarge
}

extension HTTPError {
    public var status: Int {
        switch self {
        case .badRequest: return 400
        case .unsupportedMediaType: return 415
        case .payloadTooLarge: return 413
        }
    }

    /// The JSON error response (`invalid_request`, the OAuth and federation code for malformed
    /// requests) for this error.
    public var response: HTTPResponse {
        switch self {
        case .badRequest(let description), .unsupportedMediaType(let description):
            return .error(status: status, code: "invalid_request", description: description)
        case .payloadTooLarge:
            return .error(status: status, code: "invalid_request", description: "request body too large")
        }
    }
}
