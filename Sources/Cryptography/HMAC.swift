import COpenSSL
import Support

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
        guard let ctx = keyedContext(key) else { fatalError("OpenSSL HMAC-SHA256 failed") }
        defer { EVP_MAC_CTX_free(ctx) }
        guard let out = finish(ctx, data) else { fatalError("OpenSSL HMAC-SHA256 failed") }
        return out
    }

    /// A new HMAC-SHA256 context set up with `key`, nil if OpenSSL fails.
    fileprivate static func keyedContext(_ key: [UInt8]) -> OpaquePointer? {
        // An empty Swift array may hand OpenSSL a null pointer; HMAC allows an empty key, so
        // pass a valid one-byte buffer with a zero length instead.
        let keyBuffer = key.isEmpty ? [0] : key
        guard let ctx = EVP_MAC_CTX_new(mac) else { return nil }
        let ok: Bool = "SHA256".withCString { digest in
            // The parameter keeps the name's pointer, so it must outlive this call: a
            // StaticString's storage does, a bridged String's temporary would not.
            let name = UnsafeRawPointer(("digest" as StaticString).utf8Start).assumingMemoryBound(to: CChar.self)
            var parameters = [
                OSSL_PARAM_construct_utf8_string(name, UnsafeMutablePointer(mutating: digest), 0),
                OSSL_PARAM_construct_end(),
            ]
            return EVP_MAC_init(ctx, keyBuffer, key.count, &parameters) == 1
        }
        guard ok else { EVP_MAC_CTX_free(ctx); return nil }
        return ctx
    }

    /// Feeds `data` to an initialised context and returns the 32-byte MAC, nil on failure.
    fileprivate static func finish(_ ctx: OpaquePointer, _ data: [UInt8]) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: 32)
        var length = 0
        let dataBuffer = data.isEmpty ? [0] : data
        guard EVP_MAC_update(ctx, dataBuffer, data.count) == 1, EVP_MAC_final(ctx, &out, &length, out.count) == 1,
              length == 32 else { return nil }
        return out
    }

    /// HMAC-SHA256 under one fixed key, for a server secret that MACs a value on every request
    /// (c_nonces, DPoP nonces). A one-shot `sha256(key:data:)` makes a context, fetches SHA-256
    /// by name and hashes the key's pads each time, several times per issuance flow. Here the
    /// keyed contexts are kept: `EVP_MAC_init` with no key restarts one from its key's pads (the
    /// HMAC provider's reinit, checked against the one-shot form by HMACTests; measured: see
    /// docs/performance.md).
    ///
    /// A context is not safe for concurrent use, so they are lent out one thread at a time
    /// from a small pool, as `ECDSASigner` does.
    public final class SHA256Key: @unchecked Sendable {
        private let key: [UInt8]
        private let idle = Locked<[OpaquePointer]>([])
        /// Contexts kept for reuse; more threads than this at once make (and free) their own.
        private static let poolSize = 4

        public init(_ key: [UInt8]) { self.key = key }

        deinit {
            for ctx in idle.current { EVP_MAC_CTX_free(ctx) }
        }

        /// HMAC-SHA256 of `data` under this key: 32 bytes, equal to `HMAC.sha256(key:data:)`.
        public func mac(_ data: [UInt8]) -> [UInt8] {
            let reused = idle.withLock { $0.popLast() }
            // A reused context restarts from its key (no key given: the previous one stays).
            let ready = reused.flatMap { EVP_MAC_init($0, nil, 0, nil) == 1 ? $0 : nil }
            if let reused, ready == nil { EVP_MAC_CTX_free(reused) }
            guard let ctx = ready ?? HMAC.keyedContext(key), let out = HMAC.finish(ctx, data) else {
                fatalError("OpenSSL HMAC-SHA256 failed")
            }
            let kept = idle.withLock { pool -> Bool in
                guard pool.count < Self.poolSize else { return false }
                pool.append(ctx)
                return true
            }
            if !kept { EVP_MAC_CTX_free(ctx) }
            return out
        }
    }
}
