/// Why a JWE was refused or could not be made. Separate from `JOSEError` because callers map
/// decryption failures to their own codes (OpenID4VCI §8.3.1.2 `invalid_encryption_parameters`,
/// or a generic `invalid_request`), and must never learn more than "did not decrypt".
public enum JWEError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not five parts, bad base64url, header not a JSON object, bad member types or sizes.
    case malformed(String)
    /// `alg` other than ECDH-ES (key wrapping, RSA, dir, ...), or missing.
    case unsupportedAlgorithm(String)
    /// `enc` other than the allowed AES-GCM variants, or missing.
    case unsupportedEncryption(String)
    /// `zip` (RFC 7516 §4.1.3; compression before encryption leaks length) or `crit`.
    case unsupportedHeader(String)
    /// `epk` missing, not an EC public key, on the wrong curve, or not a point on the curve.
    case invalidEphemeralKey(String)
    /// Our key (or the recipient JWK) cannot be used for ECDH-ES.
    case invalidKey(String)
    /// Wrong key, tampered header, IV, ciphertext or tag.
    case decryptionFailed

    public var description: String {
        switch self {
        case .malformed(let why): return "malformed JWE: \(why)"
        case .unsupportedAlgorithm(let alg): return "unsupported JWE alg \"\(alg)\""
        case .unsupportedEncryption(let enc): return "unsupported JWE enc \"\(enc)\""
        case .unsupportedHeader(let name): return "unsupported JWE header parameter \(name)"
        case .invalidEphemeralKey(let why): return "invalid epk: \(why)"
        case .invalidKey(let why): return "invalid key: \(why)"
        case .decryptionFailed: return "JWE decryption failed"
        }
    }
}
