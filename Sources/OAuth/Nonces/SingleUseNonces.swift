import Cryptography
import Store
import Support

/// Stateless nonces that are each good for one use: OpenID4VCI's `c_nonce` (§7.2), and any
/// server's challenge of the same kind. A nonce is 8 bytes of issue time (big-endian), 16
/// random bytes and a 16-byte HMAC-SHA256 over both, base64url, under a key derived from the
/// service's secret with its own label (`NonceKey`). Nothing is written when one is handed out,
/// so a nonce endpoint costs no database commit; the request that spends it records it in the
/// `ReplayStore`, so each is still good for one use, for `lifetime`, and survives a restart.
///
/// The time comes first so that the recorded nonces of one second share their first ten
/// characters and land on the last leaves of the `jti` index instead of a random one each
/// (see `OrderedIdentifier`). Nonces of earlier versions (random bytes first) are still accepted.
public struct SingleUseNonces: Sendable {
    public let issuer: String
    /// The replay records' purpose (e.g. `c_nonce`).
    public let purpose: String
    /// Seconds a nonce stays good.
    public let lifetime: Int64
    public let clock: any Clock
    public let store: any ReplayStore
    /// The MAC key, with its HMAC contexts kept (see `HMAC.SHA256Key`).
    let key: HMAC.SHA256Key

    /// `label` separates this use's key from every other use of `secret` (see `NonceKey`).
    public init(issuer: String, secret: [UInt8], label: String, purpose: String, lifetime: Int64, clock: any Clock,
                store: any ReplayStore) {
        self.issuer = issuer
        self.purpose = purpose
        self.lifetime = lifetime
        self.clock = clock
        self.store = store
        key = HMAC.SHA256Key(NonceKey.derive(issuer: issuer, secret: secret, label: label))
    }

    /// A fresh nonce.
    public func issue() -> String {
        let time = clock.now()
        let body = (0..<8).map { UInt8(truncatingIfNeeded: time >> (56 - 8 * $0)) } + SecureRandom.bytes(16)
        return Base64URL.encode(body + mac(body))
    }

    /// Spends a nonce: true for exactly one caller, while it is unexpired.
    public func consume(_ nonce: String) throws(OAuthError) -> Bool {
        try OAuthError.store { () throws(StoreError) in try consume(nonce, in: store) }
    }

    /// Spends a nonce in `records` (e.g. the repository of an open transaction, so the use
    /// commits or rolls back with the rest): false for one this issuer did not make, an
    /// expired one, or one already used. The use is an INSERT OR IGNORE of the nonce into the
    /// replay records until the nonce expires, so of 50 concurrent requests with one nonce
    /// exactly one gets `true`; expired records are purged only once the nonce itself is
    /// refused by its time.
    public func consume(_ nonce: String, in records: any ReplayStore) throws(StoreError) -> Bool {
        guard let issuedAt = issueTime(of: nonce, now: clock.now()) else { return false }
        return try records.recordJTI(issuer: issuer, purpose: purpose, jti: nonce, expiresAt: issuedAt + lifetime)
    }

    /// The issue time of a nonce this issuer made that is neither older than `lifetime` nor
    /// from the future (5 s of leeway, as for DPoP nonces); nil otherwise. Both layouts have
    /// the same length and MAC key, and the MAC covers the body whatever its layout, so it is
    /// checked once; a body read in the wrong layout yields a time of random bytes, which the
    /// window refuses.
    public func issueTime(of nonce: String, now: Int64) -> Int64? {
        guard nonce.utf8.count == 54, let bytes = Base64URL.decode(nonce), bytes.count == 40 else { return nil }
        let body = Array(bytes[0..<24])
        guard ConstantTime.equal(mac(body), bytes[24...]) else { return nil }
        for timeAt in [0, 16] {  // this version's layout, then the earlier one's
            let time = body[timeAt..<timeAt + 8].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            if time <= now + 5, now - time < lifetime { return time }
        }
        return nil
    }

    /// The 16-byte MAC over a nonce's body.
    public func mac(_ body: [UInt8]) -> [UInt8] {
        Array(key.mac(body).prefix(16))
    }
}

/// The MAC keys of stateless nonces: HKDF of a service's secret with the issuer as salt and a
/// label per use (DPoP nonces, c_nonces), so no two uses share a key.
public enum NonceKey {
    /// The derivation cannot fail for a non-empty secret; an empty one (never generated so)
    /// falls back to the issuer string as key material, which still separates issuers.
    public static func derive(issuer: String, secret: [UInt8], label: String) -> [UInt8] {
        let material = secret.isEmpty ? Array(issuer.utf8) : secret
        return (try? KeyDerivation.hkdf(inputKeyMaterial: material, salt: Array(issuer.utf8),
                                        info: Array(label.utf8), outputLength: 32)) ?? material
    }
}
