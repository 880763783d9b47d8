/// Entity statements fetched from other entities, kept until they expire so chain building
/// does not refetch them on every resolve.
public struct StatementCacheRepository: Sendable {
    private let database: Database

    public init(database: Database) {
        self.database = database
    }

    /// Stores or replaces the cached body for `url`.
    public func put(url: String, body: String, expiresAt: Int64, fetchedAt: Int64) throws(StoreError) {
        try database.execute("""
            INSERT INTO statement_cache (url, body, expires_at, fetched_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (url) DO UPDATE
            SET body = excluded.body, expires_at = excluded.expires_at, fetched_at = excluded.fetched_at
            """, [.text(url), .text(body), .integer(expiresAt), .integer(fetchedAt)])
    }

    /// The cached body, or nil when absent or expired (an entry expires at `expiresAt`,
    /// matching JWT `exp`: not valid at or after that second).
    public func get(url: String, now: Int64) throws(StoreError) -> String? {
        try database.query("SELECT body FROM statement_cache WHERE url = ? AND expires_at > ?",
                           [.text(url), .integer(now)])
            .first?.text("body")
    }

    /// Deletes expired entries; returns how many.
    @discardableResult
    public func purge(now: Int64) throws(StoreError) -> Int {
        try database.executeCountingChanges("DELETE FROM statement_cache WHERE expires_at <= ?",
                                            [.integer(now)])
    }
}
