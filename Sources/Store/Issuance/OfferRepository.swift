import Cryptography

/// One row of `issuance_offers`: a credential offer (OpenID4VCI 1.0 §4.1) and the state of its
/// pre-authorized code. `configurationIDs` is stored as one string joined by newlines (ids are
/// URIs or names and never contain one).
public struct OfferRecord: Sendable, Equatable {
    public var id: String
    public var issuer: String
    public var persona: String
    public var configurationIDs: [String]
    public var grantType: String
    public var preAuthorizedCode: String?
    public var txCode: String?
    public var txCodeFailures: Int64
    public var issuerState: String?
    public var createdAt: Int64
    public var expiresAt: Int64
    public var redeemedAt: Int64?

    public init(id: String, issuer: String, persona: String, configurationIDs: [String], grantType: String,
                preAuthorizedCode: String?, txCode: String?, txCodeFailures: Int64 = 0, issuerState: String?,
                createdAt: Int64, expiresAt: Int64, redeemedAt: Int64? = nil) {
        self.id = id
        self.issuer = issuer
        self.persona = persona
        self.configurationIDs = configurationIDs
        self.grantType = grantType
        self.preAuthorizedCode = preAuthorizedCode
        self.txCode = txCode
        self.txCodeFailures = txCodeFailures
        self.issuerState = issuerState
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.redeemedAt = redeemedAt
    }
}

/// Why a pre-authorized code was or was not redeemed. The domain maps every refusal to the
/// spec's error code; the repository only reports what it found.
public enum PreAuthorizedRedemption: Sendable, Equatable {
    case redeemed(OfferRecord)
    case unknown
    case expired
    case alreadyRedeemed
    /// The wrong-tx_code budget is spent: the code is dead.
    case exhausted
    /// The offer carries a tx_code and the request none.
    case txCodeMissing
    /// The offer carries no tx_code and the request one.
    case txCodeUnexpected
    /// Counted as a failure; `remaining` attempts are left.
    case txCodeWrong(remaining: Int64)
}

/// Credential offers (`issuance_offers`).
public struct OfferRepository: Sendable {
    private let database: Database

    public init(database: Database) { self.database = database }

    public func insert(_ offer: OfferRecord) throws(StoreError) {
        try database.execute(
            Self.insertSQL,
            [.text(offer.id), .text(offer.issuer), .text(offer.persona), .text(offer.configurationIDs.joined(separator: "\n")),
             .text(offer.grantType), SQLValue(offer.preAuthorizedCode), SQLValue(offer.txCode), .integer(offer.txCodeFailures),
             SQLValue(offer.issuerState), .integer(offer.createdAt), .integer(offer.expiresAt), SQLValue(offer.redeemedAt)])
    }

    /// The offer with this id, unexpired at `now`.
    public func find(issuer: String, id: String, now: Int64) throws(StoreError) -> OfferRecord? {
        try database.query(Self.findByIDSQL,
                           [.text(id), .text(issuer), .integer(now)]).first.map(Self.record)
    }

    /// The offer carrying this `issuer_state`, unexpired at `now`.
    public func find(issuer: String, issuerState: String, now: Int64) throws(StoreError) -> OfferRecord? {
        try database.query(Self.findByIssuerStateSQL,
                           [.text(issuerState), .text(issuer), .integer(now)]).first.map(Self.record)
    }

    /// Redeems a pre-authorized code. Check and update run in one transaction under the
    /// database lock, so attempts are strictly ordered: the sixth wrong tx_code finds the code
    /// already dead, and of N concurrent right attempts the conditional UPDATE changes a row
    /// for exactly one.
    public func redeem(issuer: String, preAuthorizedCode code: String, txCode: String?, now: Int64,
                       maxFailures: Int64) throws(StoreError) -> PreAuthorizedRedemption {
        try redeem(issuer: issuer, preAuthorizedCode: code, txCode: txCode, now: now, maxFailures: maxFailures) {
            _, _ throws(StoreError) in ()
        }.redemption
    }

    /// `redeem`, with `then` run in the same transaction right after a successful redemption
    /// (the token endpoint stores its access token there): one transaction, not a savepoint
    /// inside the caller's (BEGIN, SAVEPOINT, RELEASE, COMMIT on every token request where
    /// BEGIN and COMMIT do). A throw from `then` rolls the redemption back too.
    ///
    /// The read and the conditional UPDATE stay two statements: one UPDATE … RETURNING for the
    /// common case (no tx_code) costs more than both, SQLite buffering the returned row in a
    /// temporary table (measured: see docs/performance.md).
    public func redeem<T>(issuer: String, preAuthorizedCode code: String, txCode: String?, now: Int64, maxFailures: Int64,
                          then: (OfferRecord, Database) throws(StoreError) -> T)
        throws(StoreError) -> (redemption: PreAuthorizedRedemption, value: T?) {
        try database.atomically { db throws(StoreError) -> (PreAuthorizedRedemption, T?) in
            let redemption = try Self.checkAndRedeem(db, issuer: issuer, code: code, txCode: txCode, now: now,
                                                     maxFailures: maxFailures)
            guard case .redeemed(let redeemed) = redemption else { return (redemption, nil) }
            return (redemption, try then(redeemed, db))
        }
    }

    /// The checks of `redeem` one by one, under its transaction.
    private static func checkAndRedeem(_ db: Database, issuer: String, code: String, txCode: String?, now: Int64,
                                       maxFailures: Int64) throws(StoreError) -> PreAuthorizedRedemption {
        guard let row = try db.query(findByCodeSQL, [.text(code), .text(issuer)]).first else { return .unknown }
        let offer = record(row)
        // The row's own key for the updates below: by `id` each went through the id index first.
        guard case .integer(let rowid) = row.values[columnCount] else { return .unknown }
        if offer.redeemedAt != nil { return .alreadyRedeemed }
        if offer.expiresAt <= now { return .expired }
        if offer.txCodeFailures >= maxFailures { return .exhausted }
        switch (offer.txCode, txCode) {
        case (nil, nil): break
        case (nil, .some): return .txCodeUnexpected
        case (.some, nil): return .txCodeMissing
        case (.some(let expected), .some(let presented)):
            // A tx_code is short; its length is public in the offer anyway.
            guard ConstantTime.equal(expected, presented) else {
                try db.execute("UPDATE issuance_offers SET tx_code_failures = tx_code_failures + 1 WHERE rowid = ?",
                               [.integer(rowid)])
                return .txCodeWrong(remaining: max(0, maxFailures - offer.txCodeFailures - 1))
            }
        }
        let changed = try db.executeCountingChanges(
            "UPDATE issuance_offers SET redeemed_at = ? WHERE rowid = ? AND redeemed_at IS NULL",
            [.integer(now), .integer(rowid)])
        guard changed == 1 else { return .alreadyRedeemed }
        var redeemed = offer
        redeemed.redeemedAt = now
        return .redeemed(redeemed)
    }

    /// Deletes offers that expired before `before`; returns how many went.
    @discardableResult
    public func purge(expiredBefore before: Int64) throws(StoreError) -> Int {
        try database.executeCountingChanges("DELETE FROM issuance_offers WHERE expires_at <= ?", [.integer(before)])
    }

    /// Every column, in the order `record` reads them by position, so a token request looks
    /// no names up in the row's dictionary (12 of them with `SELECT *`).
    private static let columns = """
        id, issuer, persona, configuration_ids, grant_type, pre_authorized_code, tx_code, tx_code_failures, issuer_state, \
        created_at, expires_at, redeemed_at
        """

    // Made once: the statement cache is keyed by the SQL text, so an interpolated string would
    // be built again on every call.
    private static let insertSQL = "INSERT INTO issuance_offers (\(columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    private static let findByIDSQL = "SELECT \(columns) FROM issuance_offers WHERE id = ? AND issuer = ? AND expires_at > ?"
    private static let findByIssuerStateSQL =
        "SELECT \(columns) FROM issuance_offers WHERE issuer_state = ? AND issuer = ? AND expires_at > ?"
    /// With the rowid after the columns (`redeem` updates the row by it).
    private static let findByCodeSQL = "SELECT \(columns), rowid FROM issuance_offers WHERE pre_authorized_code = ? AND issuer = ?"
    private static let columnCount = 12

    private static func record(_ row: Row) -> OfferRecord {
        let values = row.values
        func text(_ i: Int) -> String? { if case .text(let value) = values[i] { value } else { nil } }
        func int(_ i: Int) -> Int64? { if case .integer(let value) = values[i] { value } else { nil } }
        let ids = text(3) ?? ""
        return OfferRecord(
            id: text(0) ?? "", issuer: text(1) ?? "", persona: text(2) ?? "",
            configurationIDs: ids.isEmpty ? [] : ids.split(separator: "\n").map(String.init),
            grantType: text(4) ?? "", preAuthorizedCode: text(5), txCode: text(6), txCodeFailures: int(7) ?? 0,
            issuerState: text(8), createdAt: int(9) ?? 0, expiresAt: int(10) ?? 0, redeemedAt: int(11))
    }
}
