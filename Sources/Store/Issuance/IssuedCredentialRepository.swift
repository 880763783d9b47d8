/// One row of `issued_credentials`: what was issued, never what it says. No claim value is
/// stored: the persona id names the person, the configuration the format, the status list entry
/// and the holder key's thumbprint tie the record to the credential.
public struct IssuedCredentialRecord: Sendable, Equatable {
    public var id: String
    public var issuer: String
    public var persona: String
    public var configurationID: String
    public var statusURI: String
    public var statusIndex: Int
    /// The Token Status List value (0 valid, 1 invalid, 2 suspended).
    public var status: Int
    /// RFC 7638 thumbprint of the key the credential is bound to.
    public var keyThumbprint: String
    /// Shared by the credentials of one credential response (OpenID4VCI §8.3).
    public var notificationID: String?
    /// The last event the wallet reported for it (§11.1).
    public var notificationEvent: String?
    public var issuedAt: Int64
    public var expiresAt: Int64
    /// Who attested the holder key (a key attestation's `iss`, or its x5c leaf's subject), when
    /// the proof carried a key attestation (OpenID4VCI 1.0 Appendix D; schema step 5).
    public var keyAttestationIssuer: String?
    /// The attestation's `key_storage`, as the JSON array text it carried.
    public var keyStorage: String?

    public init(id: String, issuer: String, persona: String, configurationID: String, statusURI: String, statusIndex: Int,
                status: Int = 0, keyThumbprint: String, notificationID: String?, notificationEvent: String? = nil,
                issuedAt: Int64, expiresAt: Int64, keyAttestationIssuer: String? = nil, keyStorage: String? = nil) {
        self.id = id
        self.issuer = issuer
        self.persona = persona
        self.configurationID = configurationID
        self.statusURI = statusURI
        self.statusIndex = statusIndex
        self.status = status
        self.keyThumbprint = keyThumbprint
        self.notificationID = notificationID
        self.notificationEvent = notificationEvent
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.keyAttestationIssuer = keyAttestationIssuer
        self.keyStorage = keyStorage
    }
}

/// Issued-credential records (`issued_credentials`), which are also the status lists' content:
/// a list is built from the rows that name it. Entries are keyed by the list's integer id
/// (schema step 4) while callers name lists by URI, so each statement looks the id up with
/// `(SELECT id FROM status_lists WHERE uri = ?)`, which SQLite evaluates once, through the
/// lists' URI index, before it touches the entries.
public struct IssuedCredentialRepository: Sendable {
    private let database: Database

    public init(database: Database) { self.database = database }

    /// Inserts a record; a taken (status_uri, status_index) pair, or a list never opened
    /// (see `StatusListRepository`), is `StoreError.constraint`.
    public func insert(_ record: IssuedCredentialRecord) throws(StoreError) {
        try database.execute(
            """
            INSERT INTO issued_credentials (id, issuer, persona, configuration_id, status_uri, status_list, status_index, status,
                key_thumbprint, notification_id, notification_event, issued_at, expires_at, key_attestation_issuer, key_storage)
            VALUES (?1, ?2, ?3, ?4, ?5, (SELECT id FROM status_lists WHERE uri = ?5), ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
            """,
            [.text(record.id), .text(record.issuer), .text(record.persona), .text(record.configurationID),
             .text(record.statusURI), .integer(Int64(record.statusIndex)), .integer(Int64(record.status)),
             .text(record.keyThumbprint), SQLValue(record.notificationID), SQLValue(record.notificationEvent),
             .integer(record.issuedAt), .integer(record.expiresAt), SQLValue(record.keyAttestationIssuer),
             SQLValue(record.keyStorage)])
    }

    /// Removes records (a response that could not be signed after its records were written).
    public func delete(ids: [String]) throws(StoreError) {
        for id in ids { try database.execute("DELETE FROM issued_credentials WHERE id = ?", [.text(id)]) }
    }

    /// The record with this id; `issuer` nil matches any issuer (the CLI works on the whole file).
    public func find(id: String, issuer: String? = nil) throws(StoreError) -> IssuedCredentialRecord? {
        try database.query("SELECT * FROM issued_credentials WHERE id = ? AND (? IS NULL OR issuer = ?)",
                           [.text(id), SQLValue(issuer), SQLValue(issuer)]).first.map(Self.record)
    }

    /// Records, oldest first; `issuer` and `persona` nil match any.
    public func list(issuer: String?, persona: String?) throws(StoreError) -> [IssuedCredentialRecord] {
        try database.query(
            """
            SELECT * FROM issued_credentials WHERE (? IS NULL OR issuer = ?) AND (? IS NULL OR persona = ?)
            ORDER BY issued_at, rowid
            """, [SQLValue(issuer), SQLValue(issuer), SQLValue(persona), SQLValue(persona)]).map(Self.record)
    }

    /// Sets the status of one record; false when there is no such record.
    public func setStatus(id: String, issuer: String?, status: Int) throws(StoreError) -> Bool {
        try database.executeCountingChanges(
            "UPDATE issued_credentials SET status = ? WHERE id = ? AND (? IS NULL OR issuer = ?)",
            [.integer(Int64(status)), .text(id), SQLValue(issuer), SQLValue(issuer)]) > 0
    }

    /// Records the wallet's event for every credential of one response whose persona is
    /// `persona`; returns how many matched (0: unknown notification id).
    public func recordNotification(issuer: String, notificationID: String, persona: String, event: String) throws(StoreError) -> Int {
        try database.executeCountingChanges(
            "UPDATE issued_credentials SET notification_event = ? WHERE issuer = ? AND notification_id = ? AND persona = ?",
            [.text(event), .text(issuer), .text(notificationID), .text(persona)])
    }

    /// Whether an entry of the list at `uri` is taken.
    public func isTaken(statusURI uri: String, index: Int) throws(StoreError) -> Bool {
        try !database.query(
            "SELECT 1 FROM issued_credentials WHERE status_list = (SELECT id FROM status_lists WHERE uri = ?) AND status_index = ?",
            [.text(uri), .integer(Int64(index))]).isEmpty
    }

    /// How many entries of the list at `uri` are taken.
    public func count(statusURI uri: String) throws(StoreError) -> Int {
        Int(try database.query(
            "SELECT COUNT(*) AS n FROM issued_credentials WHERE status_list = (SELECT id FROM status_lists WHERE uri = ?)",
            [.text(uri)]).first?.int("n") ?? 0)
    }

    /// (index, status) of every entry of the list at `uri` that is not valid (0): all a status
    /// list needs, read through the partial index on non-zero statuses.
    public func nonValidStatuses(statusURI uri: String) throws(StoreError) -> [(index: Int, status: Int)] {
        try database.query(
            """
            SELECT status_index, status FROM issued_credentials
            WHERE status_list = (SELECT id FROM status_lists WHERE uri = ?) AND status <> 0
            """, [.text(uri)]).map { (Int($0.int("status_index") ?? 0), Int($0.int("status") ?? 0)) }
    }

    static func record(_ row: Row) -> IssuedCredentialRecord {
        IssuedCredentialRecord(
            id: row.text("id") ?? "", issuer: row.text("issuer") ?? "", persona: row.text("persona") ?? "",
            configurationID: row.text("configuration_id") ?? "", statusURI: row.text("status_uri") ?? "",
            statusIndex: Int(row.int("status_index") ?? 0), status: Int(row.int("status") ?? 0),
            keyThumbprint: row.text("key_thumbprint") ?? "", notificationID: row.text("notification_id"),
            notificationEvent: row.text("notification_event"), issuedAt: row.int("issued_at") ?? 0,
            expiresAt: row.int("expires_at") ?? 0, keyAttestationIssuer: row.text("key_attestation_issuer"),
            keyStorage: row.text("key_storage"))
    }
}
