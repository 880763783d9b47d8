/// One row of `verifier_requests`.
public struct PresentationRequestRecord: Sendable, Equatable {
    public var verifier: String
    public var id: String
    public var state: String
    public var nonce: String
    public var clientID: String
    public var clientIDPrefix: String
    public var responseMode: String
    /// The DCQL query, as JSON text.
    public var dcqlQuery: String
    public var redirectURI: String?
    /// `pending`, `verified` or `refused`.
    public var status: String
    /// The report (JSON text) once answered.
    public var result: String?
    public var responseCode: String?
    public var createdAt: Int64
    public var expiresAt: Int64
    public var answeredAt: Int64?

    public init(verifier: String, id: String, state: String, nonce: String, clientID: String, clientIDPrefix: String,
                responseMode: String, dcqlQuery: String, redirectURI: String?, status: String = "pending", result: String? = nil,
                responseCode: String? = nil, createdAt: Int64, expiresAt: Int64, answeredAt: Int64? = nil) {
        self.verifier = verifier
        self.id = id
        self.state = state
        self.nonce = nonce
        self.clientID = clientID
        self.clientIDPrefix = clientIDPrefix
        self.responseMode = responseMode
        self.dcqlQuery = dcqlQuery
        self.redirectURI = redirectURI
        self.status = status
        self.result = result
        self.responseCode = responseCode
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.answeredAt = answeredAt
    }
}

/// Presentation requests of the verifier (`verifier_requests`).
public struct PresentationRequestRepository: Sendable {
    private let database: Database

    public init(database: Database) { self.database = database }

    public func insert(_ r: PresentationRequestRecord) throws(StoreError) {
        try database.execute(
            """
            INSERT INTO verifier_requests
                (verifier, id, state, nonce, client_id, client_id_prefix, response_mode, dcql_query, redirect_uri, status,
                 created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.text(r.verifier), .text(r.id), .text(r.state), .text(r.nonce), .text(r.clientID), .text(r.clientIDPrefix),
             .text(r.responseMode), .text(r.dcqlQuery), SQLValue(r.redirectURI), .text(r.status), .integer(r.createdAt),
             .integer(r.expiresAt)])
    }

    public func find(verifier: String, id: String) throws(StoreError) -> PresentationRequestRecord? {
        try database.query("SELECT * FROM verifier_requests WHERE verifier = ? AND id = ?", [.text(verifier), .text(id)])
            .first.map(Self.record)
    }

    public func find(verifier: String, state: String) throws(StoreError) -> PresentationRequestRecord? {
        try database.query("SELECT * FROM verifier_requests WHERE verifier = ? AND state = ?", [.text(verifier), .text(state)])
            .first.map(Self.record)
    }

    /// Records the answer of a pending request; false (nothing written) when it was answered
    /// already: the check and the write are one statement, so two responses racing for one
    /// request cannot both be taken.
    public func answer(verifier: String, id: String, status: String, result: String, responseCode: String?,
                       now: Int64) throws(StoreError) -> Bool {
        try database.executeCountingChanges(
            """
            UPDATE verifier_requests SET status = ?, result = ?, response_code = ?, answered_at = ?
            WHERE verifier = ? AND id = ? AND status = 'pending'
            """,
            [.text(status), .text(result), SQLValue(responseCode), .integer(now), .text(verifier), .text(id)]) == 1
    }

    /// Deletes requests that expired more than `keep` seconds ago (answered ones too: their
    /// verdict stays readable that long).
    public func purge(now: Int64, keep: Int64 = 86_400) throws(StoreError) -> Int {
        try database.executeCountingChanges("DELETE FROM verifier_requests WHERE expires_at < ?", [.integer(now - keep)])
    }

    static func record(_ row: Row) -> PresentationRequestRecord {
        PresentationRequestRecord(
            verifier: row.text("verifier") ?? "", id: row.text("id") ?? "", state: row.text("state") ?? "",
            nonce: row.text("nonce") ?? "", clientID: row.text("client_id") ?? "", clientIDPrefix: row.text("client_id_prefix") ?? "",
            responseMode: row.text("response_mode") ?? "", dcqlQuery: row.text("dcql_query") ?? "{}",
            redirectURI: row.text("redirect_uri"), status: row.text("status") ?? "pending", result: row.text("result"),
            responseCode: row.text("response_code"), createdAt: row.int("created_at") ?? 0, expiresAt: row.int("expires_at") ?? 0,
            answeredAt: row.int("answered_at"))
    }
}
