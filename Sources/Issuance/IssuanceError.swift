import OAuth

/// Every refusal of the PID Provider, with the error code the governing specification names:
/// OpenID4VCI 1.0 §8.3.1.2, §9.3, §11.3, and every `OAuthError` of the authorization server
/// (RFC 6749 §5.2, RFC 9126, RFC 9449 §5, §8, RFC 6750 §3.1), converted without loss (see
/// `init(_:)`), so one type reaches the endpoints. The domain never builds an HTTP response:
/// the `Endpoints/` folder renders these through the HTTP layer's `ErrorResponse`.
public struct IssuanceError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable {
        // OAuth 2.0 and extensions.
        case invalidRequest = "invalid_request"
        case invalidClient = "invalid_client"
        case invalidGrant = "invalid_grant"
        case unauthorizedClient = "unauthorized_client"
        case unsupportedGrantType = "unsupported_grant_type"
        case unsupportedResponseType = "unsupported_response_type"
        case invalidScope = "invalid_scope"
        case accessDenied = "access_denied"
        case invalidAuthorizationDetails = "invalid_authorization_details"
        case invalidRequestURI = "invalid_request_uri"
        case invalidDPoPProof = "invalid_dpop_proof"
        case useDPoPNonce = "use_dpop_nonce"
        case invalidToken = "invalid_token"
        /// RFC 6750 §3.1: a valid token that does not cover what was asked (403).
        case insufficientScope = "insufficient_scope"
        case serverError = "server_error"
        case temporarilyUnavailable = "temporarily_unavailable"
        // OpenID4VCI 1.0.
        case invalidCredentialRequest = "invalid_credential_request"
        case unknownCredentialConfiguration = "unknown_credential_configuration"
        case unknownCredentialIdentifier = "unknown_credential_identifier"
        case invalidProof = "invalid_proof"
        case invalidNonce = "invalid_nonce"
        case invalidEncryptionParameters = "invalid_encryption_parameters"
        case credentialRequestDenied = "credential_request_denied"
        case invalidTransactionID = "invalid_transaction_id"
        case issuancePending = "issuance_pending"
        case invalidNotificationID = "invalid_notification_id"
        case invalidNotificationRequest = "invalid_notification_request"
        // Trustbed's own: the admin API and pages.
        case notFound = "not_found"
        case unauthorized = "unauthorized"
    }

    public let codeValue: Code
    public let description: String
    /// `use_dpop_nonce` (and any DPoP error at the token endpoint) carries a fresh nonce the
    /// client must use (RFC 9449 §8).
    public var dpopNonce: String?
    /// For `invalid_token` and missing credentials at a protected resource: the scheme to name
    /// in `WWW-Authenticate` (`Bearer` or `DPoP`, RFC 6750 §3 and RFC 9449 §7.1).
    public var authenticationScheme: String?
    /// False when the request carried no authentication at all (no `Authorization`, or a
    /// scheme we do not support): RFC 6750 §3.1 says the challenge then SHOULD NOT include an
    /// error code, so `WWW-Authenticate` names only the scheme (the JSON body keeps the code,
    /// as every error of this server is JSON).
    public var challengeNamesError = true
    /// `issuance_pending`: seconds the wallet should wait (OpenID4VCI §9.3).
    public var interval: Int?

    public init(_ code: Code, _ description: String, dpopNonce: String? = nil, authenticationScheme: String? = nil,
                interval: Int? = nil) {
        self.codeValue = code
        self.description = description
        self.dpopNonce = dpopNonce
        self.authenticationScheme = authenticationScheme
        self.interval = interval
    }

    /// The HTTP status the specifications give each code.
    public var statusCode: Int {
        switch codeValue {
        case .invalidClient, .invalidToken, .unauthorized: 401
        // At a protected resource (a `WWW-Authenticate` scheme is set), DPoP failures are 401
        // (RFC 9449 §7.1, §9); at the token endpoint they are 400.
        case .useDPoPNonce where authenticationScheme != nil: 401
        case .invalidDPoPProof where authenticationScheme != nil: 401
        case .accessDenied, .insufficientScope: 403
        case .notFound: 404
        case .serverError: 500
        case .temporarilyUnavailable: 503
        default: 400
        }
    }
}

extension IssuanceError {
    /// An `OAuthError` as the PID Provider's error: same code, description, nonce, scheme and
    /// challenge, so status, body and headers are what the OAuth layer meant (every OAuth code
    /// is an `IssuanceError` code; `IssuanceErrorHTTPTests` holds them to it).
    public init(_ error: OAuthError) {
        // Every OAuthError.Code has its namesake here; a missing one is caught by the tests.
        self.init(Code(rawValue: error.code.rawValue) ?? .serverError, error.description, dpopNonce: error.dpopNonce,
                  authenticationScheme: error.authenticationScheme)
        challengeNamesError = error.challengeNamesError
    }

    /// A protected resource's 401 for a request without usable credentials (RFC 6750 §3.1):
    /// `WWW-Authenticate` names `scheme` with no `error`.
    public static func authenticationRequired(_ why: String, scheme: String) -> IssuanceError {
        var error = IssuanceError(.invalidToken, why, authenticationScheme: scheme)
        error.challengeNamesError = false
        return error
    }

    public static func invalidRequest(_ why: String) -> IssuanceError { IssuanceError(.invalidRequest, why) }
    public static func invalidGrant(_ why: String) -> IssuanceError { IssuanceError(.invalidGrant, why) }
    public static func invalidCredentialRequest(_ why: String) -> IssuanceError { IssuanceError(.invalidCredentialRequest, why) }
    public static func invalidProof(_ why: String) -> IssuanceError { IssuanceError(.invalidProof, why) }
    public static func serverError(_ why: String) -> IssuanceError { IssuanceError(.serverError, why) }
}
