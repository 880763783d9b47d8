/// Issued trust marks and standing revocations, for the trust-mark-status and
/// trust-mark-list endpoints.
public struct TrustMarkRepository: Sendable {
    private let database: Database

    public init(database: Database) {
        self.database = database
    }

    /// Stores an issued mark; recording the same id again is a no-op (the first record stands).
    /// While a revocation of its (issuer, type, subject) stands, the mark is stored as already
    /// revoked, so a mark issued by mistake after revocation is never reported active.
    public func record(_ record: TrustMarkRecord) throws(StoreError) {
        try database.atomically { database throws(StoreError) in
            var stored = record
            if stored.revokedAt == nil,
               let standing = try revocation(issuer: record.issuer, trustMarkType: record.trustMarkType,
                                             subject: record.subject) {
                // A mark cannot be revoked before it existed.
                stored.revokedAt = max(standing.revokedAt, record.issuedAt)
                stored.revocationReason = standing.reason
            }
            try database.execute("""
                INSERT INTO trust_marks (\(TrustMarkRecord.columns))
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO NOTHING
                """, [.text(stored.id), .text(stored.issuer), .text(stored.subject),
                      .text(stored.trustMarkType), .integer(stored.issuedAt), SQLValue(stored.expiresAt),
                      SQLValue(stored.revokedAt), SQLValue(stored.revocationReason)])
        }
    }

    public func find(id: String) throws(StoreError) -> TrustMarkRecord? {
        try database.query("SELECT \(TrustMarkRecord.columns) FROM trust_marks WHERE id = ?", [.text(id)])
            .first.flatMap(TrustMarkRecord.init(row:))
    }

    /// Every mark issued to `subject` under `trustMarkType`, oldest first.
    public func records(issuer: String, trustMarkType: String, subject: String) throws(StoreError) -> [TrustMarkRecord] {
        try database.query("""
            SELECT \(TrustMarkRecord.columns) FROM trust_marks
            WHERE issuer = ? AND trust_mark_type = ? AND subject = ?
            ORDER BY issued_at, id
            """, [.text(issuer), .text(trustMarkType), .text(subject)])
            .compactMap(TrustMarkRecord.init(row:))
    }

    /// Subjects holding at least one mark of `trustMarkType` that is neither revoked nor
    /// expired at `now`, sorted; what the trust-mark-list endpoint publishes.
    public func activeSubjects(issuer: String, trustMarkType: String, now: Int64) throws(StoreError) -> [String] {
        try database.query("""
            SELECT DISTINCT subject FROM trust_marks
            WHERE issuer = ? AND trust_mark_type = ? AND revoked_at IS NULL
              AND (expires_at IS NULL OR expires_at > ?)
            ORDER BY subject
            """, [.text(issuer), .text(trustMarkType), .integer(now)])
            .compactMap { $0.text("subject") }
    }

    /// Marks every issued mark of (issuer, type, subject) revoked AND stores the revocation so
    /// later issuance is refused/flagged; returns how many issued records it touched.
    /// Revoking again keeps the first revocation's time and reason, on the standing revocation
    /// and on marks already revoked: revocation is a fact about the past, not a setting.
    @discardableResult
    public func revoke(issuer: String, trustMarkType: String, subject: String,
                       at time: Int64, reason: String) throws(StoreError) -> Int {
        try database.atomically { database throws(StoreError) in
            try database.execute("""
                INSERT INTO trust_mark_revocations (issuer, trust_mark_type, subject, revoked_at, reason)
                VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (issuer, trust_mark_type, subject) DO NOTHING
                """, [.text(issuer), .text(trustMarkType), .text(subject), .integer(time), .text(reason)])
            return try database.executeCountingChanges("""
                UPDATE trust_marks SET revoked_at = ?, revocation_reason = ?
                WHERE issuer = ? AND trust_mark_type = ? AND subject = ? AND revoked_at IS NULL
                """, [.integer(time), .text(reason), .text(issuer), .text(trustMarkType), .text(subject)])
        }
    }

    /// The standing revocation of (issuer, type, subject), if any.
    public func revocation(issuer: String, trustMarkType: String,
                           subject: String) throws(StoreError) -> (revokedAt: Int64, reason: String)? {
        let rows = try database.query("""
            SELECT revoked_at, reason FROM trust_mark_revocations
            WHERE issuer = ? AND trust_mark_type = ? AND subject = ?
            """, [.text(issuer), .text(trustMarkType), .text(subject)])
        guard let row = rows.first, let revokedAt = row.int("revoked_at"),
              let reason = row.text("reason") else { return nil }
        return (revokedAt, reason)
    }

    /// Lifts the standing revocation so new marks are recorded as active. Marks already
    /// revoked stay revoked: those JWTs were reported revoked and must not come back to life.
    /// A no-op when nothing is revoked.
    public func unrevoke(issuer: String, trustMarkType: String, subject: String) throws(StoreError) {
        try database.execute("""
            DELETE FROM trust_mark_revocations
            WHERE issuer = ? AND trust_mark_type = ? AND subject = ?
            """, [.text(issuer), .text(trustMarkType), .text(subject)])
    }
}
