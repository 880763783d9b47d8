import COpenSSL

/// HMAC (RFC 2104) through OpenSSL 3's EVP_MAC interface, which replaces the deprecated
/// `HMAC_CTX` functions. Used for values derived from a server secret that must be stable
/// across restarts but unguessable without it, such as PID recovery codes and DPoP nonces.
public enum HMAC {
    // Fetched once: `EVP_Q_mac` fetches HMAC and SHA-256 again on every call. A fetched
    // EVP_MAC is immutable and may be shared by threads (crypto(7), "Algorithm fetching").
    nonisolated(unsafe) private static let mac: OpaquePointer = {
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { fatalError("OpenSSL has no HMAC") }
        return mac
    }()

    /// HMAC-SHA256 of `data` under `key`: 32 bytes.
    public static func sha256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length = 0
        // An empty Swift array may hand OpenSSL a null pointer; HMAC allows an empty key and
        // empty data, so pass a valid one-byte buffer with a zero length instead.
        let keyBuffer = key.isEmpty ? [0] : key, dataBuffer = data.isEmpty ? [0] : data
        let ok: Bool = "SHA256".withCString { digest in
            // The parameter keeps the name's pointer, so it must outlive this call: a
            // StaticString's storage does, a bridged String's temporary would not.
            let name = UnsafeRawPointer(("digest" as StaticString).utf8Start).assumingMemoryBound(to: CChar.self)
            var parameters = [
                OSSL_PARAM_construct_utf8_string(name, UnsafeMutablePointer(mutating: digest), 0),
                OSSL_PARAM_construct_end(),
            ]
            guard let ctx = EVP_MAC_CTX_new(mac) else { return false }
            defer { EVP_MAC_CTX_free(ctx) }
            return EVP_MAC_init(ctx, keyBuffer, key.count, &parameters) == 1
                && EVP_MAC_update(ctx, dataBuffer, data.count) == 1
                && EVP_MAC_final(ctx, &out, &length, out.count) == 1
        }
        // A built-in MAC failing means the library itself is broken (as for `Digest`).
        guard ok, length == 32 else { fatalError("OpenSSL HMAC-SHA256 failed") }
        return out
    }
}
