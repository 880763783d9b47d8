import Cryptography
import Support

/// Stateless `DPoP-Nonce`s (RFC 9449 §8, §9): 8 bytes of issue time and a 16-byte HMAC-SHA256
/// over it under a key derived from the service's secret (`NonceKey`, with its own label, so
/// DPoP and c_nonces never share a key). Nothing is written per nonce, any number of proofs
/// may reuse one while it lives (`lifetime`), and restarts keep issued nonces valid. Replays
/// are caught by the `jti` record, not by the nonce.
public struct DPoPNonces: Sendable {
    public let lifetime: Int64
    public let clock: any Clock
    let key: HMAC.SHA256Key
    /// The nonce of the second it was made in. A nonce depends on its second alone, and every
    /// DPoP answer carries one, so the current second's is made once instead of a MAC and an
    /// encoding per response (shared by copies of this value).
    let memo = Locked<(time: Int64, nonce: String)?>(nil)

    public init(issuer: String, secret: [UInt8], label: String = "trustbed DPoP-Nonce v1", lifetime: Int64, clock: any Clock) {
        self.lifetime = lifetime
        self.clock = clock
        key = HMAC.SHA256Key(NonceKey.derive(issuer: issuer, secret: secret, label: label))
    }

    /// The current nonce.
    public func current() -> String {
        let time = clock.now()
        if let memo = memo.read({ $0 }), memo.time == time { return memo.nonce }
        let timeBytes = (0..<8).map { UInt8(truncatingIfNeeded: time >> (56 - 8 * $0)) }
        let nonce = Base64URL.encode(timeBytes + mac(timeBytes))
        memo.withLock { $0 = (time, nonce) }
        return nonce
    }

    /// True for a nonce this issuer made, neither older than `lifetime` nor from the future
    /// (5 s of leeway). The nonce of the memo's second is known without its MAC (it is public:
    /// every client of that second got it).
    public func isValid(_ nonce: String, now: Int64) -> Bool {
        if let memo = memo.read({ $0 }), memo.nonce == nonce {
            return memo.time <= now + 5 && now - memo.time < lifetime
        }
        guard let bytes = Base64URL.decode(nonce), bytes.count == 24 else { return false }
        let timeBytes = Array(bytes[0..<8])
        let time = timeBytes.reduce(Int64(0)) { $0 << 8 | Int64($1) }
        guard time <= now + 5, now - time < lifetime else { return false }
        return ConstantTime.equal(mac(timeBytes), bytes[8...])
    }

    private func mac(_ timeBytes: [UInt8]) -> [UInt8] {
        Array(key.mac(timeBytes).prefix(16))
    }
}
