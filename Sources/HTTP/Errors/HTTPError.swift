/// Why a request could not be turned into what a handler asked for (see `HTTPRequest+Body`).
/// Each case maps to one status code and the `invalid_request` code OAuth 2.0 and OpenID
/// Federation (§8.9) use for malformed requests; thrown from a handler, it renders itself.
public enum HTTPError: ErrorResponse, Equatable {
    case badRequest(String)
    case unsupportedMediaType(String)
    case payloadTooLarge

    public var status: HTTPStatus {
        switch self {
        case .badRequest: return .badRequest
        case .unsupportedMediaType: return .unsupportedMediaType
        case .payloadTooLarge: return .payloadTooLarge
        }
    }

    public var code: String { "invalid_request" }

    public var errorDescription: String {
        switch self {
        case .badRequest(let description), .unsupportedMediaType(let description): return description
        case .payloadTooLarge: return "request body too large"
        }
    }
}
