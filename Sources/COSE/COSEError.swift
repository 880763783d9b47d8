import Cryptography

/// Why a COSE object was refused. Each case is one kind of failure, so callers can map them
/// onto their protocol's errors.
public enum COSEError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not a COSE structure of the expected shape, or a header with bad member types.
    case malformed(String)
    /// Missing, unknown, or not in the caller's allow-list.
    case unsupportedAlgorithm(String)
    /// The key's type or curve does not fit the algorithm.
    case keyAlgorithmMismatch
    case invalidSignature
    /// A detached payload was not supplied, or an attached one was supplied again.
    case payloadMismatch(String)
    /// A `crit` header lists a parameter this verifier does not understand.
    case unsupportedCritical(String)
    case invalidKey(String)
    case signingFailed

    public var description: String {
        switch self {
        case .malformed(let why): return "malformed COSE object: \(why)"
        case .unsupportedAlgorithm(let alg): return "unsupported or disallowed algorithm \(alg)"
        case .keyAlgorithmMismatch: return "key does not fit the algorithm"
        case .invalidSignature: return "signature verification failed"
        case .payloadMismatch(let why): return "payload: \(why)"
        case .unsupportedCritical(let label): return "critical header parameter \(label) not understood"
        case .invalidKey(let why): return "invalid key: \(why)"
        case .signingFailed: return "signing failed"
        }
    }

    /// Translates a key-layer failure into the COSE vocabulary.
    init(_ error: CryptoError) {
        switch error {
        case .algorithmKeyMismatch: self = .keyAlgorithmMismatch
        case .unsupportedAlgorithm(let alg): self = .unsupportedAlgorithm(alg)
        case .invalidKey(let why): self = .invalidKey(why)
        case .invalidPEM: self = .invalidKey("invalid PEM")
        case .keyGenerationFailed: self = .invalidKey("key generation failed")
        case .signingFailed: self = .signingFailed
        }
    }
}
