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
            var challenge = "\(scheme) error=\"\(codeValue.rawValue)\", error_description=\"\(Self.quoted(description))\""
            if scheme == "DPoP" { challenge += ", algs=\"ES256\"" }
            out.append(("WWW-Authenticate", challenge))
        }
        if let dpopNonce { out.append(("DPoP-Nonce", dpopNonce)) }
        return out
    }

    /// A quoted-string may not hold `"` or `\` unescaped (RFC 9110 §5.6.4); descriptions are
    /// ours, but may quote client input.
    private static func quoted(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F && $0 != "\"" && $0 != "\\" }.map(Character.init))
    }
}
