import Store

/// Every refusal of the OAuth building blocks, with the error code the governing RFC names:
/// OAuth 2.0 (RFC 6749 §5.2 at the token endpoint, §4.1.2.1 in an authorization response),
/// Bearer tokens (RFC 6750 §3.1), DPoP (RFC 9449 §5, §7.1, §8), PAR (RFC 9126 §2.3) and
/// Rich Authorization Requests (RFC 9396 §5). A service renders it itself (or converts it
/// into its own error type without loss: every field below survives), so this module needs no
/// HTTP.
public struct OAuthError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable {
        // RFC 6749 §5.2 and §4.1.2.1.
        case invalidRequest = "invalid_request"
        case invalidClient = "invalid_client"
        case invalidGrant = "invalid_grant"
        case unauthorizedClient = "unauthorized_client"
        case unsupportedGrantType = "unsupported_grant_type"
        case unsupportedResponseType = "unsupported_response_type"
        case invalidScope = "invalid_scope"
        case accessDenied = "access_denied"
        case serverError = "server_error"
        case temporarilyUnavailable = "temporarily_unavailable"
        // RFC 6750 §3.1.
        case invalidToken = "invalid_token"
        /// A valid token that does not cover what was asked (403).
        case insufficientScope = "insufficient_scope"
        // RFC 9449 §5, §8.
        case invalidDPoPProof = "invalid_dpop_proof"
        case useDPoPNonce = "use_dpop_nonce"
        // RFC 9126 §2.3 (a `request_uri` that is unknown, expired, used or another client's).
        case invalidRequestURI = "invalid_request_uri"
        // RFC 9396 §5.
        case invalidAuthorizationDetails = "invalid_authorization_details"
    }

    public let code: Code
    public let description: String
    /// `use_dpop_nonce` (and any DPoP error at the token endpoint) carries a fresh nonce the
    /// client must use (RFC 9449 §8).
    public var dpopNonce: String?
    /// At a protected resource: the scheme to name in `WWW-Authenticate` (`Bearer` or `DPoP`,
    /// RFC 6750 §3 and RFC 9449 §7.1). Its presence also makes DPoP failures 401.
    public var authenticationScheme: String?
    /// False when the request carried no authentication at all (no `Authorization`, or a
    /// scheme we do not support): RFC 6750 §3.1 says the challenge then SHOULD NOT include an
    /// error code, so `WWW-Authenticate` names only the scheme.
    public var challengeNamesError = true
    /// For `server_error` from a failed store: what failed, for the operator's log, never for
    /// the client (the description stays generic).
    public var cause: String?

    public init(_ code: Code, _ description: String, dpopNonce: String? = nil, authenticationScheme: String? = nil) {
        self.code = code
        self.description = description
        self.dpopNonce = dpopNonce
        self.authenticationScheme = authenticationScheme
    }

    /// The HTTP status the specifications give each code.
    public var statusCode: Int {
        switch code {
        case .invalidClient, .invalidToken: 401
        // At a protected resource (a `WWW-Authenticate` scheme is set), DPoP failures are 401
        // (RFC 9449 §7.1, §9); at the token endpoint they are 400.
        case .useDPoPNonce where authenticationScheme != nil: 401
        case .invalidDPoPProof where authenticationScheme != nil: 401
        case .accessDenied, .insufficientScope: 403
        case .serverError: 500
        case .temporarilyUnavailable: 503
        default: 400
        }
    }
}

extension OAuthError {
    /// A protected resource's 401 for a request without usable credentials (RFC 6750 §3.1):
    /// `WWW-Authenticate` names `scheme` with no `error`.
    public static func authenticationRequired(_ why: String, scheme: String) -> OAuthError {
        var error = OAuthError(.invalidToken, why, authenticationScheme: scheme)
        error.challengeNamesError = false
        return error
    }

    public static func invalidRequest(_ why: String) -> OAuthError { OAuthError(.invalidRequest, why) }
    public static func invalidGrant(_ why: String) -> OAuthError { OAuthError(.invalidGrant, why) }
    public static func invalidClient(_ why: String) -> OAuthError { OAuthError(.invalidClient, why) }
    public static func serverError(_ why: String) -> OAuthError { OAuthError(.serverError, why) }

    /// Runs a repository call; a storage failure is the server's (500), with the store's
    /// message kept in `cause` for the log, not in the description a client sees.
    public static func store<T>(_ body: () throws(StoreError) -> T) throws(OAuthError) -> T {
        do throws(StoreError) {
            return try body()
        } catch {
            var failure = OAuthError.serverError("the authorization store failed")
            failure.cause = "\(error)"
            throw failure
        }
    }
}
