import COpenSSL

/// SHA-2 digests (thumbprints, at_hash-style claims, SD-JWT disclosures).
public enum Digest {
    public static func sha256(_ d: [UInt8]) -> [UInt8] { digest(d, sha256MD, 32) }
    public static func sha384(_ d: [UInt8]) -> [UInt8] { digest(d, sha384MD, 48) }
    public static func sha512(_ d: [UInt8]) -> [UInt8] { digest(d, sha512MD, 64) }

    // Fetched once: handed `EVP_sha256()`, OpenSSL 3 fetches the implementation again on every
    // call (OpenSSL's crypto(7), "Explicit fetching" versus implicit), and an SD-JWT VC hashes
    // dozens of disclosures.
    // A fetched EVP_MD is immutable and may be shared by threads (OpenSSL's crypto(7), "Algorithm
    // fetching"), which is why the unchecked constants below are safe.
    nonisolated(unsafe) private static let sha256MD = fetch("SHA256")
    nonisolated(unsafe) private static let sha384MD = fetch("SHA384")
    nonisolated(unsafe) private static let sha512MD = fetch("SHA512")

    /// The digest ECDSA pairs with each curve in JOSE (RFC 7518 §3.4: ES256, ES384, ES512).
    static func md(for curve: EllipticCurve) -> OpaquePointer {
        switch curve {
        case .p256: return sha256MD
        case .p384: return sha384MD
        case .p521: return sha512MD
        }
    }

    /// A SHA-256 context reused for many inputs in a row (the ~50 disclosure and decoy digests
    /// of one SD-JWT VC): the one-shot `sha256` makes, initializes and frees an EVP_MD_CTX per
    /// call, a good part of the cost of hashing a short input.
    /// Not thread-safe: one per task, dropped when done.
    public final class SHA256Context {
        private let context: OpaquePointer

        public init() {
            guard let context = EVP_MD_CTX_new() else { fatalError("OpenSSL cannot allocate a digest context") }
            self.context = context
        }

        deinit { EVP_MD_CTX_free(context) }

        /// The same bytes as `Digest.sha256(data)`.
        public func hash(_ data: [UInt8]) -> [UInt8] { hash([], data) }

        /// The digest of bytes the caller holds in a buffer (a disclosure inside the SD-JWT
        /// being assembled), without copying them into an array first.
        public func hash(_ data: UnsafeBufferPointer<UInt8>) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: 32)
            var length: UInt32 = 0
            guard EVP_DigestInit_ex2(context, Digest.sha256MD, nil) == 1, EVP_DigestUpdate(context, data.baseAddress, data.count) == 1,
                  EVP_DigestFinal_ex(context, &out, &length) == 1, length == 32 else {
                fatalError("OpenSSL SHA-256 digest failed")
            }
            return out
        }

        /// `hash(data)` lent to `body` from the stack rather than returned in a new array, for a
        /// caller that encodes the digest at once (an SD-JWT disclosure's digest goes straight
        /// into its `_sd` array as base64url) without a 32-byte array allocated and freed for
        /// each of the ~46 digests of a PID.
        public func withHash<R>(_ data: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
            try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { out in
                var length: UInt32 = 0
                guard EVP_DigestInit_ex2(context, Digest.sha256MD, nil) == 1, EVP_DigestUpdate(context, data.baseAddress, data.count) == 1,
                      EVP_DigestFinal_ex(context, out.baseAddress, &length) == 1, length == 32 else {
                    fatalError("OpenSSL SHA-256 digest failed")
                }
                return try body(UnsafeBufferPointer(out))
            }
        }

        /// `hash(head + data)` without building the concatenation: an mdoc element's digest
        /// covers its tag-24 wrapper (a few head bytes) and then the encoded item, which can
        /// be kilobytes (the portrait).
        public func hash(_ head: [UInt8], _ data: [UInt8]) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: 32)
            var length: UInt32 = 0
            // As in `digest`: a built-in SHA-256 failing means the library itself is broken.
            guard EVP_DigestInit_ex2(context, Digest.sha256MD, nil) == 1, EVP_DigestUpdate(context, head, head.count) == 1,
                  EVP_DigestUpdate(context, data, data.count) == 1, EVP_DigestFinal_ex(context, &out, &length) == 1,
                  length == 32 else {
                fatalError("OpenSSL SHA-256 digest failed")
            }
            return out
        }
    }

    private static func fetch(_ name: String) -> OpaquePointer {
        guard let md = EVP_MD_fetch(nil, name, nil) else { fatalError("OpenSSL has no \(name)") }
        return md
    }

    private static func digest(_ data: [UInt8], _ md: OpaquePointer, _ size: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        var length: UInt32 = 0
        // A built-in SHA-2 failing means the library itself is broken; continuing would
        // produce wrong digests silently.
        guard EVP_Digest(data, data.count, &out, &length, md, nil) == 1, Int(length) == size else {
            fatalError("OpenSSL SHA-2 digest failed")
        }
        return out
    }
}
