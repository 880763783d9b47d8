import Cryptography
import Store
import Support

extension PIDProvider {
    static let cNoncePurpose = "c_nonce"

    /// A fresh `c_nonce` (OpenID4VCI 1.0 §7.2). Stateless, like the `DPoP-Nonce`: 8 bytes of
    /// issue time (big-endian), 16 random bytes and a 16-byte HMAC-SHA256 over both under a key
    /// derived from the issuer's recovery secret with its own label, base64url. Nothing is
    /// written when one is handed out (the nonce endpoint was a database commit per issuance);
    /// the request that uses it records it (see `consumeCNonce(_:in:)`), so each is still good
    /// for one credential request, for `configuration.nonceLifetime`, and survives a restart.
    ///
    /// The time comes first so that the recorded nonces of one second share their first ten
    /// characters and land on the last leaves of the `jti` index instead of a random one each
    /// (see `orderedToken`). Nonces of earlier versions (random bytes first) are still accepted.
    public func issueCNonce() throws(IssuanceError) -> String {
        let time = clock.now()
        let body = (0..<8).map { UInt8(truncatingIfNeeded: time >> (56 - 8 * $0)) } + SecureRandom.bytes(16)
        return Base64URL.encode(body + cNonceMAC(body))
    }

    /// Consumes a `c_nonce` in a transaction of its own: true for exactly one caller, while it
    /// is unexpired.
    public func consumeCNonce(_ nonce: String) throws(IssuanceError) -> Bool {
        try inCredentialTransaction { db in try consumeCNonce(nonce, in: db) }
    }

    /// Consumes a `c_nonce` inside `db`'s transaction: false for one this issuer did not make,
    /// an expired one, or one already used. The use is an INSERT OR IGNORE of the nonce into
    /// the `jti` records until the nonce expires, one statement under the database lock, so of
    /// 50 concurrent requests with one nonce exactly one gets `true`; expired records are
    /// purged only once the nonce itself is refused by its time.
    func consumeCNonce(_ nonce: String, in db: Database) throws(StoreError) -> Bool {
        let now = clock.now()
        guard let issuedAt = cNonceTime(nonce, now: now) else { return false }
        return try NonceRepository(database: db).recordJTI(
            issuer: issuer, purpose: Self.cNoncePurpose, jti: nonce, expiresAt: issuedAt + configuration.nonceLifetime)
    }

    /// The issue time of a nonce this issuer made that is neither older than `nonceLifetime`
    /// nor from the future (5 s of leeway, as for DPoP nonces); nil otherwise. Both layouts
    /// have the same length and MAC key, and the MAC covers the body whatever its layout, so it
    /// is checked once; a body read in the wrong layout yields a time of random bytes, which
    /// the window refuses.
    func cNonceTime(_ nonce: String, now: Int64) -> Int64? {
        guard nonce.utf8.count == 54, let bytes = Base64URL.decode(nonce), bytes.count == 40 else { return nil }
        let body = Array(bytes[0..<24])
        var difference: UInt8 = 0
        for (a, b) in zip(cNonceMAC(body), bytes[24...]) { difference |= a ^ b }
        guard difference == 0 else { return nil }
        for timeAt in [0, 16] {  // this version's layout, then the earlier one's
            let time = body[timeAt..<timeAt + 8].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            if time <= now + 5, now - time < configuration.nonceLifetime { return time }
        }
        return nil
    }

    func cNonceMAC(_ body: [UInt8]) -> [UInt8] {
        Array(cNonceKey.mac(body).prefix(16))
    }
}
