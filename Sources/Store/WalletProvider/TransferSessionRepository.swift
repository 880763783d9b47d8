/// One row of `wallet_provider_transfer_sessions` (schema: `WalletTransferSchema`).
public struct TransferSessionRecord: Sendable, Equatable {
    public var provider: String
    public var id: String
    /// The account of the new phone, which asked for the transfer.
    public var destination: String
    /// The account of the old phone, once it confirmed.
    public var source: String?
    public var state: String
    public var destinationAppVersion: String
    public var sourceAppVersion: String?
    /// The compact JWE the source sent, until the session ends.
    public var payload: String?
    public var createdAt: Int64
    public var updatedAt: Int64
    public var expiresAt: Int64
    public var endedAt: Int64?
    public var endedBy: String?

    public init(provider: String, id: String, destination: String, source: String? = nil, state: String, destinationAppVersion: String,
                sourceAppVersion: String? = nil, payload: String? = nil, createdAt: Int64, updatedAt: Int64, expiresAt: Int64,
                endedAt: Int64? = nil, endedBy: String? = nil) {
        self.provider = provider
        self.id = id
        self.destination = destination
        self.source = source
        self.state = state
        self.destinationAppVersion = destinationAppVersion
        self.sourceAppVersion = sourceAppVersion
        self.payload = payload
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.expiresAt = expiresAt
        self.endedAt = endedAt
        self.endedBy = endedBy
    }
}

/// Transfer sessions. The state machine lives in the domain (`WalletProvider/Transfer/`); this
/// stores rows and moves them with compare-and-set on `state`, so of two concurrent moves from
/// one state exactly one wins, whatever transaction the caller runs them in.
public struct TransferSessionRepository: Sendable {
    let database: Database

    public init(database: Database) { self.database = database }

    /// The states a session can still leave (the purge tick and the admin page look at these).
    public static let openStates = ["created", "ready_for_transfer", "ready_for_download"]

    public func insert(_ session: TransferSessionRecord) throws(StoreError) {
        try database.execute(
            """
            INSERT INTO wallet_provider_transfer_sessions
                (provider, id, destination, source, state, destination_app_version, source_app_version, payload,
                 created_at, updated_at, expires_at, ended_at, ended_by)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, Self.values(session))
    }

    public func find(provider: String, id: String) throws(StoreError) -> TransferSessionRecord? {
        try database.query("SELECT * FROM wallet_provider_transfer_sessions WHERE provider = ? AND id = ?",
                           [.text(provider), .text(id)]).first.map(Self.record)
    }

    /// Writes every column of `session` if the stored row is still in `state` (compare-and-set);
    /// false when it is not (another request moved it first) or there is no such row.
    public func replace(_ session: TransferSessionRecord, whenState state: String) throws(StoreError) -> Bool {
        try database.executeCountingChanges(
            """
            UPDATE wallet_provider_transfer_sessions SET destination = ?, source = ?, state = ?, destination_app_version = ?,
                source_app_version = ?, payload = ?, created_at = ?, updated_at = ?, expires_at = ?, ended_at = ?, ended_by = ?
            WHERE provider = ? AND id = ? AND state = ?
            """,
            Array(Self.values(session).dropFirst(2)) + [.text(session.provider), .text(session.id), .text(state)]) == 1
    }

    /// The sessions an account is either side of, newest first.
    public func list(provider: String, account: String) throws(StoreError) -> [TransferSessionRecord] {
        try database.query(
            """
            SELECT * FROM wallet_provider_transfer_sessions WHERE provider = ? AND (destination = ? OR source = ?)
            ORDER BY created_at DESC, id
            """, [.text(provider), .text(account), .text(account)]).map(Self.record)
    }

    /// The provider's sessions still open, oldest first.
    public func listOpen(provider: String) throws(StoreError) -> [TransferSessionRecord] {
        try database.query(
            """
            SELECT * FROM wallet_provider_transfer_sessions
            WHERE provider = ? AND state IN ('created', 'ready_for_transfer', 'ready_for_download') ORDER BY created_at, id
            """, [.text(provider)]).map(Self.record)
    }

    /// The provider's open sessions whose lifetime ended at or before `now` (the purge tick
    /// settles them), at most `limit` per call.
    public func listDue(provider: String, now: Int64, limit: Int = 500) throws(StoreError) -> [TransferSessionRecord] {
        try database.query(
            """
            SELECT * FROM wallet_provider_transfer_sessions
            WHERE expires_at <= ? AND state IN ('created', 'ready_for_transfer', 'ready_for_download') AND provider = ?
            ORDER BY expires_at LIMIT ?
            """, [.integer(now), .text(provider), .integer(Int64(limit))]).map(Self.record)
    }

    /// The open session this destination account created, if any (a retried first disclosure
    /// gets it back instead of a second one).
    public func openSession(provider: String, destination: String) throws(StoreError) -> TransferSessionRecord? {
        try database.query(
            """
            SELECT * FROM wallet_provider_transfer_sessions
            WHERE provider = ? AND destination = ? AND state IN ('created', 'ready_for_transfer', 'ready_for_download')
            ORDER BY created_at DESC LIMIT 1
            """, [.text(provider), .text(destination)]).first.map(Self.record)
    }

    /// Removes an account's sessions (purging the account); returns how many.
    public func deleteSessions(provider: String, account: String) throws(StoreError) -> Int {
        try database.executeCountingChanges(
            "DELETE FROM wallet_provider_transfer_sessions WHERE provider = ? AND (destination = ? OR source = ?)",
            [.text(provider), .text(account), .text(account)])
    }

    private static func values(_ s: TransferSessionRecord) -> [SQLValue] {
        [.text(s.provider), .text(s.id), .text(s.destination), SQLValue(s.source), .text(s.state), .text(s.destinationAppVersion),
         SQLValue(s.sourceAppVersion), SQLValue(s.payload), .integer(s.createdAt), .integer(s.updatedAt), .integer(s.expiresAt),
         SQLValue(s.endedAt), SQLValue(s.endedBy)]
    }

    private static func record(_ row: Row) -> TransferSessionRecord {
        TransferSessionRecord(
            provider: row.text("provider") ?? "", id: row.text("id") ?? "", destination: row.text("destination") ?? "",
            source: row.text("source"), state: row.text("state") ?? "", destinationAppVersion: row.text("destination_app_version") ?? "",
            sourceAppVersion: row.text("source_app_version"), payload: row.text("payload"), createdAt: row.int("created_at") ?? 0,
            updatedAt: row.int("updated_at") ?? 0, expiresAt: row.int("expires_at") ?? 0, endedAt: row.int("ended_at"),
            endedBy: row.text("ended_by"))
    }
}
