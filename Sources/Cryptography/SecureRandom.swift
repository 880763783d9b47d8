import COpenSSL

/// Bytes from OpenSSL's CSPRNG.
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: count)
        fill(&out)
        return out
    }

    private static func fill(_ out: inout [UInt8]) {
        // Without entropy every nonce, key and code would be predictable; stopping is the only
        // safe answer, and callers should not each have to handle it.
        guard RAND_bytes(&out, Int32(out.count)) == 1 else { fatalError("RAND_bytes failed: no entropy") }
    }

    /// Many small random values (salts, mdoc element randoms) drawn with few RAND_bytes calls.
    /// Each call has a fixed cost in OpenSSL's DRBG (locking, a reseed check, an AES key
    /// schedule): one call per salt was 6% of the PID Provider's CPU. A buffer is a local value
    /// of one issuance, never shared, and every byte is handed out once.
    public struct Buffer {
        private var pool: [UInt8] = []
        private var offset = 0
        private let chunk: Int

        public init(chunk: Int = 1_024) { self.chunk = max(1, chunk) }

        public mutating func next(_ count: Int) -> [UInt8] {
            withNext(count) { Array($0) }
        }

        /// The next `count` bytes lent to `body` in place, for a caller that encodes them at
        /// once (an SD-JWT salt goes straight into its disclosure) instead of keeping an array.
        public mutating func withNext<R>(_ count: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
            if offset + count > pool.count {
                pool = [UInt8](repeating: 0, count: max(chunk, count))
                SecureRandom.fill(&pool)
                offset = 0
            }
            defer { offset += count }
            let start = offset
            return try pool.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[start..<start + count])) }
        }
    }
}
