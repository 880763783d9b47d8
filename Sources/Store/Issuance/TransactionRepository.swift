/// One row of `issuance_transactions`: a deferred credential request (OpenID4VCI 1.0 §9).
/// `request` is JSON the domain writes and reads (configuration, persona, holder keys); the
/// store keeps it opaque.
public struct TransactionRecord: Sendable, Equatable {
    public var id: String
    public var issuer: String
    /// The access token that asked for it; only that token may collect it.
    public var tokenHash: String
    public var request: String
    public var createdAt: Int64
    public var readyAt: Int64
    public var expiresAt: Int64
    public var deliveredAt: Int64?

    public init(id: String, issuer: String, tokenHash: String, request: String, createdAt: Int64, readyAt: Int64,
                expiresAt: Int64, deliveredAt: Int64? = nil) {
        self.id = id
        self.issuer = issuer
        self.tokenHash = tokenHash
        self.request = request
        self.createdAt = createdAt
        self.readyAt = readyAt
        self.expiresAt = expiresAt
        self.deliveredAt = deliveredAt
    }
}

/// Deferred issuance transactions (`issuance_transactions`).
public struct TransactionRepository: Sendable {
    private let database: Database

    public init(database: Database) { self.database = database }

    public func insert(_ transaction: TransactionRecord) throws(StoreError) {
        try database.execute(
            """
            INSERT INTO issuance_transactions (id, issuer, token_hash, request, created_at, ready_at, expires_at, delivered_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.text(transaction.id), .text(transaction.issuer), .text(transaction.tokenHash), .text(transaction.request),
             .integer(transaction.createdAt), .integer(transaction.readyAt), .integer(transaction.expiresAt),
             SQLValue(transaction.deliveredAt)])
    }

    /// The undelivered, unexpired transaction with this id for this token.
    public func findOpen(issuer: String, id: String, tokenHash: String, now: Int64) throws(StoreError) -> TransactionRecord? {
        guard let row = try database.query(
            """
            SELECT * FROM issuance_transactions WHERE id = ? AND issuer = ? AND token_hash = ?
            AND delivered_at IS NULL AND expires_at > ?
            """, [.text(id), .text(issuer), .text(tokenHash), .integer(now)]).first else { return nil }
        return TransactionRecord(
            id: row.text("id") ?? "", issuer: row.text("issuer") ?? "", tokenHash: row.text("token_hash") ?? "",
            request: row.text("request") ?? "{}", createdAt: row.int("created_at") ?? 0, readyAt: row.int("ready_at") ?? 0,
            expiresAt: row.int("expires_at") ?? 0, deliveredAt: row.int("delivered_at"))
    }

    /// Marks the transaction delivered; true for exactly one caller (single delivery, §9.1).
    public func markDelivered(issuer: String, id: String, now: Int64) throws(StoreError) -> Bool {
        try database.executeCountingChanges(
            "UPDATE issuance_transactions SET delivered_at = ? WHERE id = ? AND issuer = ? AND delivered_at IS NULL",
            [.integer(now), .text(id), .text(issuer)]) == 1
    }

    /// Undoes `markDelivered` when the credentials could not be made after all.
    public func reopen(issuer: String, id: String) throws(StoreError) {
        try database.execute("UPDATE issuance_transactions SET delivered_at = NULL WHERE id = ? AND issuer = ?",
                             [.text(id), .text(issuer)])
    }

    /// Deletes transactions past their expiry; returns how many went.
    @discardableResult
    public func purge(now: Int64) throws(StoreError) -> Int {
        try database.executeCountingChanges("DELETE FROM issuance_transactions WHERE expires_at <= ?", [.integer(now)])
    }
}
