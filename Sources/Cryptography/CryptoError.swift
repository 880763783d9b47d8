/// Failures of key handling and signing. Verification never throws: it answers true or false.
public enum CryptoError: Error, Equatable, Sendable {
    case keyGenerationFailed
    case invalidKey(String)
    case invalidPEM
    case signingFailed
    case unsupportedAlgorithm(String)
    case algorithmKeyMismatch
}
