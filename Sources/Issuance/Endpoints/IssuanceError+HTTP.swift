import HTTP

/// The PID Provider's errors render as the specifications' JSON errors; a protected resource's
/// 401 names its scheme in `WWW-Authenticate` (RFC 6750 §3, RFC 9449 §7.1), DPoP errors carry
/// a fresh `DPoP-Nonce` (RFC 9449 §8), and `issuance_pending` its `interval`.
extension IssuanceError: ErrorResponse {
    public var status: HTTPStatus { HTTPStatus(code: statusCode) }
    public var code: String { codeValue.rawValue }
    public var errorDescription: String { description }

    public var headers: [(name: String, value: String)] {
        var out: [(name: String, value: String)] = []
        if let scheme = authenticationScheme {
            var parameters: [String] = []
            if challengeNamesError {
                // RFC 6750 §3: auth-params as quoted-strings; the description is already
                // limited to RFC 6749 §5.2's characters, so it needs no escaping.
                parameters.append("error=\"\(codeValue.rawValue)\"")
                parameters.append("error_description=\"\(ErrorDescription.sanitized(description))\"")
            }
            if scheme == "DPoP" { parameters.append("algs=\"ES256\"") }
            out.append(("WWW-Authenticate", parameters.isEmpty ? scheme : scheme + " " + parameters.joined(separator: ", ")))
        }
        if let dpopNonce { out.append(("DPoP-Nonce", dpopNonce)) }
        return out
    }
}
