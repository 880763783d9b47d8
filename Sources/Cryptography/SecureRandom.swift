import COpenSSL
import Support

/// Bytes from OpenSSL's CSPRNG.
public enum SecureRandom {
    /// `count` fresh random bytes. Requests up to `pooledLimit` bytes (tokens, ids, nonces,
    /// IVs, serials) are served from one shared pool refilled by a single `RAND_bytes` call;
    /// larger ones call `RAND_bytes` directly.
    public static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        if count <= pooledLimit { return shared.withLock { $0.next(count) } }
        var out = [UInt8](repeating: 0, count: count)
        fill(&out)
        return out
    }

    /// Each `RAND_bytes` call has a fixed cost in OpenSSL's DRBG (the public DRBG lookup, a
    /// reseed check and the CTR_DRBG update's AES key schedule), and an SD-JWT issuance flow
    /// draws several values of 16-32 bytes (ids, tokens, nonces, a status index). From this pool
    /// a draw costs a write lock and a copy, and one `RAND_bytes` of 4 KiB serves ~170 of them
    /// (measured: see docs/performance.md).
    ///
    /// Process-wide state, so it is documented: the pool is lock-protected (a `Locked`, shared
    /// by the HTTP worker threads) and every byte is handed out exactly once (see `Buffer`).
    /// The bytes not yet handed out sit in memory the way the DRBG's own state does (which
    /// predicts all its future output anyway), so memory disclosure exposes nothing new. The
    /// process never forks (child processes, if any, are spawned), so no copy of the pool can
    /// hand out the same bytes twice.
    private static let shared = Locked(Buffer(chunk: 4_096))

    /// Requests above this size go straight to `RAND_bytes`, where the fixed cost is small
    /// against the bytes made and a large draw would empty the pool for everyone else.
    static let pooledLimit = 64

    private static func fill(_ out: inout [UInt8]) {
        // Without entropy every nonce, key and code would be predictable; stopping is the only
        // safe answer, and callers should not each have to handle it.
        guard RAND_bytes(&out, Int32(out.count)) == 1 else { fatalError("RAND_bytes failed: no entropy") }
    }

    /// Many small random values (salts, mdoc element randoms) drawn with few RAND_bytes calls.
    /// Each call has a fixed cost in OpenSSL's DRBG (locking, a reseed check, an AES key
    /// schedule), too much to pay per salt. A buffer is a local value
    /// of one issuance, never shared (or, for `bytes`, behind a lock), and every byte is
    /// handed out once.
    public struct Buffer: Sendable {
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
