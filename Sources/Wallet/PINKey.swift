import Cryptography
import Support

/// The PIN key of an NL account (issue 21): a P-256 key derived on the device from the PIN and
/// a per-wallet salt, so the PIN itself is never stored or sent; the Wallet Provider only ever
/// sees its public key and signatures. Derivation (docs/wallet-provider.md, "The PIN key"):
///
///     for i = 0, 1, 2, ...:
///         okm = HKDF-SHA256(IKM = UTF-8(PIN), salt = salt, info = "trustbed pin key v1" || byte(i), L = 32)
///         d = okm as a big-endian integer
///         if 0 < d < n (the P-256 group order): the private key is d; stop
///
/// (a retry happens with probability below 2^-32.) `salt` is 16 random bytes kept in the wallet
/// file (`nl.pin_salt`, base64url), so the same PIN gives another key in another wallet.
public enum PINKey {
    public static let info = Array("trustbed pin key v1".utf8)
    public static let saltSize = 16

    /// The P-256 group order n, big-endian (SEC 2 §2.4.2).
    static let order: [UInt8] = Hex.decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")!

    public static func newSalt() -> [UInt8] { SecureRandom.bytes(saltSize) }

    public static func derive(pin: String, salt: [UInt8]) throws -> HolderKey {
        guard !pin.isEmpty else { throw WalletError.usage("the PIN must not be empty") }
        for counter in 0 ... UInt8.max {
            let okm = try KeyDerivation.hkdf(.sha256, inputKeyMaterial: Array(pin.utf8), salt: salt, info: info + [counter], outputLength: 32)
            guard okm.contains(where: { $0 != 0 }), okm.lexicographicallyPrecedes(order) else { continue }
            return try HolderKey(privateKey: try PrivateKey(p256Scalar: okm))
        }
        throw WalletError.usage("no PIN key could be derived")
    }
}
