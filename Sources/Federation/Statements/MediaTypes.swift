/// JWT `typ` values and response media types named by OpenID Federation 1.0.
public enum FederationType {
    public static let entityStatement = "entity-statement+jwt"
    public static let trustMark = "trust-mark+jwt"
    public static let trustMarkDelegation = "trust-mark-delegation+jwt"
    public static let trustMarkStatusResponse = "trust-mark-status-response+jwt"
    public static let resolveResponse = "resolve-response+jwt"
    public static let jwkSet = "jwk-set+jwt"

    /// The media type a JWT of this `typ` is served with. The types served on every request
    /// are literals: concatenating built a 41-byte heap string per answer.
    public static func contentType(_ typ: String) -> String {
        switch typ {
        case entityStatement: return "application/entity-statement+jwt"
        case resolveResponse: return "application/resolve-response+jwt"
        case jwkSet: return "application/jwk-set+jwt"
        case trustMark: return "application/trust-mark+jwt"
        default: return "application/" + typ
        }
    }
}

/// The federation endpoint paths this server mounts under an entity ID, and the metadata
/// parameter that advertises each (section 5.1.1).
public enum FederationEndpoint: String, CaseIterable, Sendable {
    case fetch, list, resolve
    case trustMark = "trust-mark"
    case trustMarkStatus = "trust-mark-status"
    case trustMarkList = "trust-mark-list"
    case historicalKeys = "historical-keys"

    public var path: String { "/" + rawValue }

    public var metadataParameter: String {
        switch self {
        case .fetch: return "federation_fetch_endpoint"
        case .list: return "federation_list_endpoint"
        case .resolve: return "federation_resolve_endpoint"
        case .trustMark: return "federation_trust_mark_endpoint"
        case .trustMarkStatus: return "federation_trust_mark_status_endpoint"
        case .trustMarkList: return "federation_trust_mark_list_endpoint"
        case .historicalKeys: return "federation_historical_keys_endpoint"
        }
    }
}

public let wellKnownFederationPath = "/.well-known/openid-federation"
