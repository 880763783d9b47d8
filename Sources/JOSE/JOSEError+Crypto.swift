import Cryptography

extension JOSEError {
    /// Translates a key-layer failure into the JOSE vocabulary callers already handle.
    init(_ error: CryptoError) {
        switch error {
        case .algorithmKeyMismatch: self = .keyAlgorithmMismatch
        case .unsupportedAlgorithm(let alg): self = .unsupportedAlgorithm(alg)
        case .invalidKey(let why): self = .invalidKey(why)
        case .invalidPEM: self = .invalidKey("invalid PEM")
        case .keyGenerationFailed: self = .invalidKey("key generation failed")
        case .signingFailed: self = .invalidKey("signing failed")
        }
    }
}
