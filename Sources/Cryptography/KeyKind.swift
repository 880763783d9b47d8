import COpenSSL

/// What an EVP_PKEY is, in the terms algorithm selection needs.
enum KeyKind: Equatable, Sendable {
    case ec(EllipticCurve)
    case ed25519
    case rsa(bits: Int)

    /// RFC 7518 §3.3 requires RSA keys of 2048 bits or more for RS*/PS*.
    static let minimumRSABits = 2048
    /// Bounds the cost of one verification on attacker-supplied keys.
    static let maximumRSABits = 16384

    /// Classifies a key, refusing types and curves JOSE does not use here (explicit EC
    /// parameters, Ed448, X25519, DSA, RSA-PSS-restricted keys, ...).
    init(pkey: OpaquePointer) throws(CryptoError) {
        if EVP_PKEY_is_a(pkey, "EC") == 1 {
            var buffer = [CChar](repeating: 0, count: 64)
            var length = 0
            guard EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, &buffer, buffer.count, &length) == 1
            else { OpenSSLErrors.clear(); throw .invalidKey("EC key without a named curve") }
            let name = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard let curve = EllipticCurve(openSSLName: name) else { throw .invalidKey("unsupported curve \(name)") }
            self = .ec(curve)
        } else if EVP_PKEY_is_a(pkey, "ED25519") == 1 {
            self = .ed25519
        } else if EVP_PKEY_is_a(pkey, "RSA") == 1 {
            let bits = Int(EVP_PKEY_get_bits(pkey))
            guard bits <= Self.maximumRSABits else { throw .invalidKey("RSA key larger than \(Self.maximumRSABits) bits") }
            self = .rsa(bits: bits)
        } else {
            throw .invalidKey("unsupported key type")
        }
    }

    func fits(_ algorithm: SignatureAlgorithm) -> Bool {
        switch (self, algorithm) {
        case (.ec(let curve), .ES256), (.ec(let curve), .ES384), (.ec(let curve), .ES512):
            return algorithm.ellipticCurve == curve
        case (.ed25519, .EdDSA): return true
        case (.rsa(let bits), .RS256), (.rsa(let bits), .PS256): return bits >= Self.minimumRSABits
        default: return false
        }
    }
}
