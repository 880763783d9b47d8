/// Seen `jti`s and used nonces (`issuance_jtis`): the replay defences of the credential endpoint
/// (each stateless `c_nonce` is recorded once, when a credential request uses it), DPoP
/// (RFC 9449 §8, §11.1) and client attestation PoPs. The `issuance_nonces` table of earlier
/// versions held stored c_nonces; it stays in the schema (old databases have it) and is only purged.
public struct NonceRepository: Sendable {
    private let database: Database

    public init(database: Database) { self.database = database }

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
