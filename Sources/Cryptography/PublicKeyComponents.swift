/// The raw numbers of a public key, as JWK and COSE_Key carry them.
/// EC coordinates are fixed-length big-endian; RSA `n` and `e` are minimal big-endian.
public enum PublicKeyComponents: Equatable, Sendable {
    /// `curve` is "P-256", "P-384" or "P-521".
    case ec(curve: String, x: [UInt8], y: [UInt8])
    /// `curve` is "Ed25519".
    case okp(curve: String, x: [UInt8])
    case rsa(n: [UInt8], e: [UInt8])
}
