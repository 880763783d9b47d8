import COpenSSL

/// HMAC (RFC 2104) through OpenSSL 3's EVP_MAC interface (`EVP_Q_mac`), which replaces the
/// deprecated `HMAC_CTX` functions. Used for values derived from a server secret that must be
/// stable across restarts but unguessable without it, such as PID recovery codes.
public enum HMAC {
    /// HMAC-SHA256 of `data` under `key`: 32 bytes.
    public static func sha256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length = 0
        // An empty Swift array may hand OpenSSL a null pointer; HMAC allows an empty key and
        // empty data, so pass a valid one-byte buffer with a zero length instead.
        let keyBuffer = key.isEmpty ? [0] : key, dataBuffer = data.isEmpty ? [0] : data
        let result = EVP_Q_mac(nil, "HMAC", nil, "SHA256", nil, keyBuffer, key.count, dataBuffer, data.count,
                               &out, out.count, &length)
        // A built-in MAC failing means the library itself is broken (as for `Digest`).
        guard result != nil, length == 32 else { fatalError("OpenSSL HMAC-SHA256 failed") }
        return out
    }
}
