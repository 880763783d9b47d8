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
            """
            INSERT INTO issuance_offers (id, issuer, persona, configuration_ids, grant_type, pre_authorized_code, tx_code,
                tx_code_failures, issuer_state, created_at, expires_at, redeemed_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.text(offer.id), .text(offer.issuer), .text(offer.persona), .text(offer.configurationIDs.joined(separator: "\n")),
             .text(offer.grantType), SQLValue(offer.preAuthorizedCode), SQLValue(offer.txCode), .integer(offer.txCodeFailures),
             SQLValue(offer.issuerState), .integer(offer.createdAt), .integer(offer.expiresAt), SQLValue(offer.redeemedAt)])
    }

    /// The offer with this id, unexpired at `now`.
    public func find(issuer: String, id: String, now: Int64) throws(StoreError) -> OfferRecord? {
        try database.query("SELECT * FROM issuance_offers WHERE id = ? AND issuer = ? AND expires_at > ?",
                           [.text(id), .text(issuer), .integer(now)]).first.map(Self.record)
    }

    /// The offer carrying this `issuer_state`, unexpired at `now`.
    public func find(issuer: String, issuerState: String, now: Int64) throws(StoreError) -> OfferRecord? {
        try database.query("SELECT * FROM issuance_offers WHERE issuer_state = ? AND issuer = ? AND expires_at > ?",
                           [.text(issuerState), .text(issuer), .integer(now)]).first.map(Self.record)
    }

    /// Redeems a pre-authorized code. Check and update run in one transaction under the
    /// database lock, so attempts are strictly ordered: the sixth wrong tx_code finds the code
    /// already dead, and of N concurrent right attempts the conditional UPDATE changes a row
    /// for exactly one.
    public func redeem(issuer: String, preAuthorizedCode code: String, txCode: String?, now: Int64,
                       maxFailures: Int64) throws(StoreError) -> PreAuthorizedRedemption {
        try database.atomically { db throws(StoreError) -> PreAuthorizedRedemption in
            guard let row = try db.query("SELECT * FROM issuance_offers WHERE pre_authorized_code = ? AND issuer = ?",
                                         [.text(code), .text(issuer)]).first else { return .unknown }
            let offer = Self.record(row)
            if offer.redeemedAt != nil { return .alreadyRedeemed }
            if offer.expiresAt <= now { return .expired }
            if offer.txCodeFailures >= maxFailures { return .exhausted }
            switch (offer.txCode, txCode) {
            case (nil, nil): break
            case (nil, .some): return .txCodeUnexpected
            case (.some, nil): return .txCodeMissing
            case (.some(let expected), .some(let presented)):
                guard Self.constantTimeEquals(expected, presented) else {
                    try db.execute("UPDATE issuance_offers SET tx_code_failures = tx_code_failures + 1 WHERE id = ?",
                                   [.text(offer.id)])
                    return .txCodeWrong(remaining: max(0, maxFailures - offer.txCodeFailures - 1))
                }
            }
            let changed = try db.executeCountingChanges(
                "UPDATE issuance_offers SET redeemed_at = ? WHERE id = ? AND redeemed_at IS NULL",
                [.integer(now), .text(offer.id)])
            guard changed == 1 else { return .alreadyRedeemed }
            var redeemed = offer
            redeemed.redeemedAt = now
            return .redeemed(redeemed)
        }
    }

    /// Deletes offers that expired before `before`; returns how many went.
    @discardableResult
    public func purge(expiredBefore before: Int64) throws(StoreError) -> Int {
        try database.executeCountingChanges("DELETE FROM issuance_offers WHERE expires_at <= ?", [.integer(before)])
    }

    /// Comparison time independent of where the strings differ (a tx_code is short; its
    /// length is public in the offer anyway).
    private static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for (p, q) in zip(x, y) { difference |= p ^ q }
        return difference == 0
    }

    private static func record(_ row: Row) -> OfferRecord {
        let ids = row.text("configuration_ids") ?? ""
        return OfferRecord(
            id: row.text("id") ?? "", issuer: row.text("issuer") ?? "", persona: row.text("persona") ?? "",
            configurationIDs: ids.isEmpty ? [] : ids.split(separator: "\n").map(String.init),
            grantType: row.text("grant_type") ?? "", preAuthorizedCode: row.text("pre_authorized_code"),
            txCode: row.text("tx_code"), txCodeFailures: row.int("tx_code_failures") ?? 0,
            issuerState: row.text("issuer_state"), createdAt: row.int("created_at") ?? 0,
            expiresAt: row.int("expires_at") ?? 0, redeemedAt: row.int("redeemed_at"))
    }
}
