/// One signing key of an entity, with its life cycle, for the historical-keys endpoint.
public struct KeyRecord: Equatable, Sendable {
    public var entity: String
    public var kid: String
    /// The public JWK as JSON text, stored verbatim.
    public var jwk: String
    public var createdAt: Int64
    /// When the key stopped being used for signing.
    public var retiredAt: Int64?
    /// Until when statements signed with the retired key may still be verified.
    public var expiresAt: Int64?
    public var revokedAt: Int64?
    public var revocationReason: String?

    public init(entity: String, kid: String, jwk: String, createdAt: Int64,
                retiredAt: Int64? = nil, expiresAt: Int64? = nil,
                revokedAt: Int64? = nil, revocationReason: String? = nil) {
        self.entity = entity
        self.kid = kid
        self.jwk = jwk
        self.createdAt = createdAt
        self.retiredAt = retiredAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.revocationReason = revocationReason
    }
}

extension KeyRecord {
    /// Reads a row selected with `KeyRecord.columns`.
    init?(row: Row) {
        guard let entity = row.text("entity"), let kid = row.text("kid"), let jwk = row.text("jwk"),
              let createdAt = row.int("created_at") else { return nil }
        self.init(entity: entity, kid: kid, jwk: jwk, createdAt: createdAt,
                  retiredAt: row.int("retired_at"), expiresAt: row.int("expires_at"),
                  revokedAt: row.int("revoked_at"), revocationReason: row.text("revocation_reason"))
    }

    static let columns =
        "entity, kid, jwk, created_at, retired_at, expires_at, revoked_at, revocation_reason"
}
