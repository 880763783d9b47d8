/// The JWS signature algorithms Trustbed supports (RFC 7518 §3, RFC 8037 for EdDSA).
/// Symmetric (HS*) and `none` are deliberately absent: a federation never trusts a shared secret.
public enum SignatureAlgorithm: String, Sendable, CaseIterable, Hashable {
    case ES256, ES384, ES512, EdDSA, RS256, PS256
}

extension SignatureAlgorithm {
    /// OpenSSL digest name; nil for EdDSA, which hashes internally (PureEdDSA).
    var digestName: String? {
        switch self {
        case .ES256, .RS256, .PS256: return "SHA256"
        case .ES384: return "SHA384"
        case .ES512: return "SHA512"
        case .EdDSA: return nil
        }
    }

    /// The only curve each ECDSA algorithm may be used with (RFC 7518 §3.4).
    var ellipticCurve: EllipticCurve? {
        switch self {
        case .ES256: return .p256
        case .ES384: return .p384
        case .ES512: return .p521
        default: return nil
        }
    }
}
