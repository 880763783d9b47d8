/// One issued trust mark, as the issuer remembers it for status and listing.
public struct TrustMarkRecord: Equatable, Sendable {
    /// SHA-256 hex of the trust mark JWT, computed by the caller.
    public var id: String
    public var issuer: String
    public var subject: String
    public var trustMarkType: String
    public var issuedAt: Int64
    public var expiresAt: Int64?
    public var revokedAt: Int64?
    public var revocationReason: String?

    public init(id: String, issuer: String, subject: String, trustMarkType: String,
                issuedAt: Int64, expiresAt: Int64? = nil,
                revokedAt: Int64? = nil, revocationReason: String? = nil) {
        self.id = id
        self.issuer = issuer
        self.subject = subject
        self.trustMarkType = trustMarkType
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.revocationReason = revocationReason
    }
}

extension TrustMarkRecord {
    /// Reads a row selected with `TrustMarkRecord.columns`.
    init?(row: Row) {
        guard let id = row.text("id"), let issuer = row.text("issuer"),
              let subject = row.text("subject"), let type = row.text("trust_mark_type"),
              let issuedAt = row.int("issued_at") else { return nil }
        self.init(id: id, issuer: issuer, subject: subject, trustMarkType: type,
                  issuedAt: issuedAt, expiresAt: row.int("expires_at"),
                  revokedAt: row.int("revoked_at"), revocationReason: row.text("revocation_reason"))
    }

    static let columns =
        "id, issuer, subject, trust_mark_type, issued_at, expires_at, revoked_at, revocation_reason"
}
