/// Server nonces (`issuance_nonces`) and seen `jti`s (`issuance_jtis`): the replay defences of
/// the credential endpoint (`c_nonce`), DPoP (RFC 9449 §8, §11.1) and client attestation PoPs.
public struct NonceRepository: Sendable {
    private let database: Database

    public init(database: Database) { self.database = database }

    /// Stores a fresh nonce for `purpose` (e.g. "c_nonce", "dpop") until `expiresAt`.
    public func insert(issuer: String, nonce: String, purpose: String, expiresAt: Int64) throws(StoreError) {
        try database.execute(
            "INSERT INTO issuance_nonces (nonce, issuer, purpose, expires_at) VALUES (?, ?, ?, ?)",
            [.text(nonce), .text(issuer), .text(purpose), .integer(expiresAt)])
    }

    /// Marks the nonce used; true for exactly one caller, and only while it is unexpired.
    public func consume(issuer: String, nonce: String, purpose: String, now: Int64) throws(StoreError) -> Bool {
        try database.executeCountingChanges(
            """
            UPDATE issuance_nonces SET used_at = ? WHERE nonce = ? AND issuer = ? AND purpose = ?
            AND used_at IS NULL AND expires_at > ?
            """, [.integer(now), .text(nonce), .text(issuer), .text(purpose), .integer(now)]) == 1
    }

    /// True when the nonce exists, is unexpired and unused (for nonces that may be presented
    /// more than once, such as DPoP nonces).
    public func isValid(issuer: String, nonce: String, purpose: String, now: Int64) throws(StoreError) -> Bool {
        try !database.query(
            """
            SELECT 1 FROM issuance_nonces WHERE nonce = ? AND issuer = ? AND purpose = ?
            AND used_at IS NULL AND expires_at > ?
            """, [.text(nonce), .text(issuer), .text(purpose), .integer(now)]).isEmpty
    }

    /// Records a `jti`; false when it was already recorded (a replay). Expired entries are
    /// kept until `purge`, so a replay inside the acceptance window is always caught.
    public func recordJTI(issuer: String, purpose: String, jti: String, expiresAt: Int64) throws(StoreError) -> Bool {
        try database.executeCountingChanges(
            "INSERT OR IGNORE INTO issuance_jtis (issuer, purpose, jti, expires_at) VALUES (?, ?, ?, ?)",
            [.text(issuer), .text(purpose), .text(jti), .integer(expiresAt)]) == 1
    }

    /// Deletes nonces and `jti`s past their expiry; returns how many rows went.
    @discardableResult
    public func purge(now: Int64) throws(StoreError) -> Int {
        try database.executeCountingChanges("DELETE FROM issuance_nonces WHERE expires_at <= ?", [.integer(now)])
            + database.executeCountingChanges("DELETE FROM issuance_jtis WHERE expires_at <= ?", [.integer(now)])
    }
}
