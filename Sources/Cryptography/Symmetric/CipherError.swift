/// Failures of key agreement, key derivation and authenticated encryption. Kept apart from
/// `CryptoError` (signing keys) so JWE and HPKE callers can tell "wrong key or tampered
/// ciphertext" from "bad signing key" without string matching.
public enum CipherError: Error, Equatable, Sendable {
    /// AES keys are 16, 24 or 32 bytes.
    case invalidKeyLength(Int)
    /// GCM here always uses the 96-bit IV of NIST SP 800-38D §8.2.1.
    case invalidNonceLength(Int)
    /// Tags are the full 128 bits; truncated tags are refused.
    case invalidTagLength(Int)
    /// The tag did not verify: wrong key, wrong AAD or tampered data. Deliberately says no more.
    case authenticationFailed
    /// ECDH refused the pair: different curves, non-EC keys, or a point OpenSSL rejects.
    case keyAgreementFailed(String)
    case derivationFailed(String)
    /// The library itself failed (allocation, missing algorithm); not the caller's input.
    case internalFailure(String)
}
