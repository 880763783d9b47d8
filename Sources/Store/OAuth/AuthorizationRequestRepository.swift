/// One row of `issuance_authorization_requests`: a pushed authorization request (RFC 9126).
/// `parameters` is JSON the domain writes and reads; the store keeps it opaque.
public struct AuthorizationRequestRecord: Sendable, Equatable {
    public var requestURI: String
    public var issuer: String
    public var clientID: String
    public var parameters: String
    public var createdAt: Int64
    public var expiresAt: Int64
    public var usedAt: Int64?

    public init(requestURI: String, issuer: String, clientID: String, parameters: String, createdAt: Int64, expiresAt: Int64,
                usedAt: Int64? = nil) {
        self.requestURI = requestURI
        self.issuer = issuer
        self.clientID = clientID
        self.parameters = parameters
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.usedAt = usedAt
    }
}

/// Pushed authorization requests (`issuance_authorization_requests`). A `request_uri` is used
/// once: the login that completes it marks it with one conditional UPDATE.
public struct AuthorizationRequestRepository: Sendable {
    private let database: Database

    public init(database: Database) { self.database = database }

    public func insert(_ request: AuthorizationRequestRecord) throws(StoreError) {
        try database.execute(
            """
            INSERT INTO issuance_authorization_requests (request_uri, issuer, client_id, parameters, created_at, expires_at, used_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            [.text(request.requestURI), .text(request.issuer), .text(request.clientID), .text(request.parameters),
             .integer(request.createdAt), .integer(request.expiresAt), SQLValue(request.usedAt)])
    }

    /// The request with this URI, unexpired and unused at `now`.
    public func findPending(issuer: String, requestURI: String, now: Int64) throws(StoreError) -> AuthorizationRequestRecord? {
        guard let row = try database.query(
            """
            SELECT * FROM issuance_authorization_requests WHERE request_uri = ? AND issuer = ? AND expires_at > ?
            AND used_at IS NULL
            """, [.text(requestURI), .text(issuer), .integer(now)]).first else { return nil }
        return AuthorizationRequestRecord(
            requestURI: row.text("request_uri") ?? "", issuer: row.text("issuer") ?? "", clientID: row.text("client_id") ?? "",
            parameters: row.text("parameters") ?? "{}", createdAt: row.int("created_at") ?? 0,
            expiresAt: row.int("expires_at") ?? 0, usedAt: row.int("used_at"))
    }

    /// Marks the request used; true for exactly one caller, and only while it is unexpired.
    public func consume(issuer: String, requestURI: String, now: Int64) throws(StoreError) -> Bool {
        try database.executeCountingChanges(
            """
            UPDATE issuance_authorization_requests SET used_at = ? WHERE request_uri = ? AND issuer = ?
            AND used_at IS NULL AND expires_at > ?
            """, [.integer(now), .text(requestURI), .text(issuer), .integer(now)]) == 1
    }

    /// Deletes requests that expired before `before`; returns how many went.
    @discardableResult
    public func purge(expiredBefore before: Int64) throws(StoreError) -> Int {
        try database.executeCountingChanges("DELETE FROM issuance_authorization_requests WHERE expires_at <= ?",
                                            [.integer(before)])
    }
}
