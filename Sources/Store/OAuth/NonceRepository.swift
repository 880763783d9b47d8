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
    ///
    /// The `jti`s go a page of `pageSize` keys at a time, in key order, each page one short
    /// statement of its own: the table holds every c_nonce used in the last `nonce_lifetime`
    /// (600,000 rows at 2,000 issuances/s), and one DELETE over all of it held the database,
    /// and so every issuance, for the whole scan. Paged, the purge takes longer in all but no
    /// statement holds the database for long (measured: see docs/performance.md). A page is
    /// found by its key range (the primary key's b-tree), so no page rescans the rows of the
    /// pages before it.
    @discardableResult
    public func purge(now: Int64, pageSize: Int = 1_000) throws(StoreError) -> Int {
        var removed = try database.executeCountingChanges("DELETE FROM issuance_nonces WHERE expires_at <= ?", [.integer(now)])
        // The last key of the previous page; "" sorts before every issuer (none is empty).
        var after: [SQLValue] = [.text(""), .text(""), .text("")]
        while true {
            let page = try database.query(
                """
                SELECT issuer, purpose, jti FROM issuance_jtis WHERE (issuer, purpose, jti) > (?, ?, ?)
                ORDER BY issuer, purpose, jti LIMIT ?
                """, after + [.integer(Int64(pageSize))])
            guard let last = page.last else { break }
            let through: [SQLValue] = [.text(last.text("issuer") ?? ""), .text(last.text("purpose") ?? ""),
                                       .text(last.text("jti") ?? "")]
            removed += try database.executeCountingChanges(
                """
                DELETE FROM issuance_jtis
                WHERE (issuer, purpose, jti) > (?, ?, ?) AND (issuer, purpose, jti) <= (?, ?, ?) AND expires_at <= ?
                """, after + through + [.integer(now)])
            guard page.count == pageSize else { break }
            after = through
        }
        return removed
    }
}
