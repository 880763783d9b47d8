/// Every key an entity has used, so rotation keeps old keys verifiable (historical keys).
public struct KeyHistoryRepository: Sendable {
    public let database: Database

    public init(database: Database) {
        self.database = database
    }

    /// Records a key in use; recording a known (entity, kid) again is a no-op, so startup can
    /// call this for every key it loads.
    public func recordActive(entity: String, kid: String, jwk: String, createdAt: Int64) throws(StoreError) {
        try database.execute("""
            INSERT INTO entity_keys (entity, kid, jwk, created_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (entity, kid) DO NOTHING
            """, [.text(entity), .text(kid), .text(jwk), .integer(createdAt)])
    }

    /// Takes a key out of signing use. Retiring again keeps the first retirement time but
    /// moves `expiresAt`, so an operator can lengthen or shorten how long it is published.
    /// Throws `.notFound` for an unknown key.
    public func retire(entity: String, kid: String, at time: Int64, expiresAt: Int64) throws(StoreError) {
        let changed = try database.executeCountingChanges("""
            UPDATE entity_keys SET retired_at = COALESCE(retired_at, ?), expires_at = ?
            WHERE entity = ? AND kid = ?
            """, [.integer(time), .integer(expiresAt), .text(entity), .text(kid)])
        guard changed > 0 else { throw .notFound }
    }

    /// Marks a key compromised or otherwise revoked; `reason` may be nil (OpenID Federation 1.0
    /// §8.7.3 lets the historical keys response omit it). Revoking again keeps the first time and
    /// reason. Throws `.notFound` for an unknown key.
    public func revoke(entity: String, kid: String, at time: Int64, reason: String?) throws(StoreError) {
        // In an UPDATE, SQLite evaluates every right-hand side against the old row, so the
        // CASE sees the revoked_at from before this statement.
        let changed = try database.executeCountingChanges("""
            UPDATE entity_keys
            SET revoked_at = COALESCE(revoked_at, ?),
                revocation_reason = CASE WHEN revoked_at IS NULL THEN ? ELSE revocation_reason END
            WHERE entity = ? AND kid = ?
            """, [.integer(time), SQLValue(reason), .text(entity), .text(kid)])
        guard changed > 0 else { throw .notFound }
    }

    /// All keys of `entity`, oldest first.
    public func keys(entity: String) throws(StoreError) -> [KeyRecord] {
        try database.query("""
            SELECT \(KeyRecord.columns) FROM entity_keys WHERE entity = ? ORDER BY created_at, kid
            """, [.text(entity)])
            .compactMap(KeyRecord.init(row:))
    }

    /// Keys of `entity` that are retired or revoked, oldest first.
    public func historical(entity: String) throws(StoreError) -> [KeyRecord] {
        try database.query("""
            SELECT \(KeyRecord.columns) FROM entity_keys
            WHERE entity = ? AND (retired_at IS NOT NULL OR revoked_at IS NOT NULL)
            ORDER BY created_at, kid
            """, [.text(entity)])
            .compactMap(KeyRecord.init(row:))
    }
}
