/// One row of `issuance_codes`: an authorization code and what it authorizes (`grant`, JSON the
/// domain writes and reads: redirect URI, PKCE challenge, persona, configurations, DPoP key).
public struct CodeRecord: Sendable, Equatable {
    public var code: String
    public var issuer: String
    public var clientID: String
    public var grant: String
    public var createdAt: Int64
    public var expiresAt: Int64
    public var usedAt: Int64?

    public init(code: String, issuer: String, clientID: String, grant: String, createdAt: Int64, expiresAt: Int64,
                usedAt: Int64? = nil) {
        self.code = code
        self.issuer = issuer
        self.clientID = clientID
        self.grant = grant
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.usedAt = usedAt
    }
}

/// Why an authorization code was or was not redeemed.
public enum CodeRedemption: Sendable, Equatable {
    case redeemed(CodeRecord)
    case unknown
    case expired
    case alreadyUsed
}

/// Authorization codes (`issuance_codes`): single use, short-lived.
public struct CodeRepository: Sendable {
    private let database: Database

    public init(database: Database) { self.database = database }

    public func insert(_ code: CodeRecord) throws(StoreError) {
        try database.execute(
            "INSERT INTO issuance_codes (code, issuer, client_id, grant, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [.text(code.code), .text(code.issuer), .text(code.clientID), .text(code.grant), .integer(code.createdAt),
             .integer(code.expiresAt), SQLValue(code.usedAt)])
    }

    /// Marks the code used and returns it. The read and the conditional UPDATE run in one
    /// transaction under the database lock; of N concurrent redemptions the UPDATE changes a
    /// row for exactly one.
    public func redeem(issuer: String, code: String, now: Int64) throws(StoreError) -> CodeRedemption {
        try database.atomically { db throws(StoreError) -> CodeRedemption in
            guard let row = try db.query("SELECT * FROM issuance_codes WHERE code = ? AND issuer = ?",
                                         [.text(code), .text(issuer)]).first else { return .unknown }
            var record = CodeRecord(
                code: row.text("code") ?? "", issuer: row.text("issuer") ?? "", clientID: row.text("client_id") ?? "",
                grant: row.text("grant") ?? "{}", createdAt: row.int("created_at") ?? 0, expiresAt: row.int("expires_at") ?? 0,
                usedAt: row.int("used_at"))
            if record.usedAt != nil { return .alreadyUsed }
            if record.expiresAt <= now { return .expired }
            let changed = try db.executeCountingChanges(
                "UPDATE issuance_codes SET used_at = ? WHERE code = ? AND issuer = ? AND used_at IS NULL",
                [.integer(now), .text(code), .text(issuer)])
            guard changed == 1 else { return .alreadyUsed }
            record.usedAt = now
            return .redeemed(record)
        }
    }

    /// Deletes codes that expired before `before`; returns how many went.
    @discardableResult
    public func purge(expiredBefore before: Int64) throws(StoreError) -> Int {
        try database.executeCountingChanges("DELETE FROM issuance_codes WHERE expires_at <= ?", [.integer(before)])
    }
}
