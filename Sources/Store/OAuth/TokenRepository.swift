/// One row of `issuance_tokens`: an access token, known only by its SHA-256 (base64url), and
/// what it grants. `grant` is JSON the domain writes and reads (configurations, credential
/// identifiers); the store keeps it opaque.
public struct TokenRecord: Sendable, Equatable {
    public var tokenHash: String
    public var issuer: String
    public var clientID: String?
    public var persona: String
    public var grant: String
    /// RFC 7638 thumbprint of the DPoP key (`cnf.jkt`); nil for a Bearer token.
    public var dpopJKT: String?
    public var issuedAt: Int64
    public var expiresAt: Int64

    public init(tokenHash: String, issuer: String, clientID: String?, persona: String, grant: String, dpopJKT: String?,
                issuedAt: Int64, expiresAt: Int64) {
        self.tokenHash = tokenHash
        self.issuer = issuer
        self.clientID = clientID
        self.persona = persona
        self.grant = grant
        self.dpopJKT = dpopJKT
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }
}

/// Access tokens (`issuance_tokens`). A token is stored by its hash, so a copy of the database
/// gives nobody a usable token.
public struct TokenRepository: Sendable {
    private let database: Database

    public init(database: Database) { self.database = database }

    public func insert(_ token: TokenRecord) throws(StoreError) {
        try database.execute(
            """
            INSERT INTO issuance_tokens (token_hash, issuer, client_id, persona, grant, dpop_jkt, issued_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.text(token.tokenHash), .text(token.issuer), SQLValue(token.clientID), .text(token.persona), .text(token.grant),
             SQLValue(token.dpopJKT), .integer(token.issuedAt), .integer(token.expiresAt)])
    }

    /// The token with this hash, unexpired at `now`.
    public func find(issuer: String, tokenHash: String, now: Int64) throws(StoreError) -> TokenRecord? {
        guard let row = try database.query(Self.findSQL, [.text(tokenHash), .text(issuer), .integer(now)]).first else {
            return nil
        }
        let values = row.values
        func text(_ i: Int) -> String? { if case .text(let value) = values[i] { value } else { nil } }
        func int(_ i: Int) -> Int64? { if case .integer(let value) = values[i] { value } else { nil } }
        return TokenRecord(
            tokenHash: text(0) ?? "", issuer: text(1) ?? "", clientID: text(2), persona: text(3) ?? "", grant: text(4) ?? "{}",
            dpopJKT: text(5), issuedAt: int(6) ?? 0, expiresAt: int(7) ?? 0)
    }

    /// Every column in the order `find` reads them by position: every credential request reads
    /// a token, and by position that takes no lookups by name in the row's dictionary.
    private static let findSQL = """
        SELECT token_hash, issuer, client_id, persona, grant, dpop_jkt, issued_at, expires_at FROM issuance_tokens
        WHERE token_hash = ? AND issuer = ? AND expires_at > ?
        """

    /// Deletes tokens that expired before `before`; returns how many went.
    @discardableResult
    public func purge(expiredBefore before: Int64) throws(StoreError) -> Int {
        try database.executeCountingChanges("DELETE FROM issuance_tokens WHERE expires_at <= ?", [.integer(before)])
    }
}
