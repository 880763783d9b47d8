/// The PIDs an NL account holds (issue 21, item 4), as the PID Providers hosted on this server
/// recorded them: credentials whose `cnf` key is one the Wallet Provider holds for the account
/// and attested (`wallet_provider_held_keys` joined to `issued_credentials` on the key
/// thumbprint and the key attestation's issuer). `issued_credentials.status` is what each PID
/// Provider's status list serves (the list token is built from it on every request), so this
/// reads the status list without fetching and decompressing it over HTTP from the same process.
public struct AccountPIDRepository: Sendable {
    private let database: Database

    public init(database: Database) { self.database = database }

    /// What stands behind an account's PIDs at `now`.
    public struct Standing: Sendable, Equatable {
        /// PIDs with status `valid` (0), not expired, not reported `credential_deleted`.
        public var live: Int
        /// PIDs the issuer revoked or suspended (status ≠ 0).
        public var withdrawn: Int
        /// PIDs past `exp`.
        public var expired: Int

        public init(live: Int, withdrawn: Int, expired: Int) {
            self.live = live
            self.withdrawn = withdrawn
            self.expired = expired
        }
    }

    /// The account's PIDs counted by standing; keys of `exceptPurpose` (a renewal's own new
    /// keys) left out.
    public func standing(provider: String, account: String, exceptPurpose: String? = nil, now: Int64) throws(StoreError) -> Standing {
        var sql = """
            SELECT
              COALESCE(SUM(c.status = 0 AND c.expires_at > ?1
                           AND (c.notification_event IS NULL OR c.notification_event <> 'credential_deleted')), 0) AS live,
              COALESCE(SUM(c.status <> 0), 0) AS withdrawn,
              COALESCE(SUM(c.status = 0 AND c.expires_at <= ?1), 0) AS expired
            FROM wallet_provider_held_keys k
            JOIN issued_credentials c ON c.key_thumbprint = k.thumbprint AND c.key_attestation_issuer = k.provider
            WHERE k.provider = ?2 AND k.account = ?3
            """
        var parameters: [SQLValue] = [.integer(now), .text(provider), .text(account)]
        if let exceptPurpose {
            sql += " AND k.purpose <> ?4"
            parameters.append(.text(exceptPurpose))
        }
        let row = try database.query(sql, parameters).first
        return Standing(live: Int(row?.int("live") ?? 0), withdrawn: Int(row?.int("withdrawn") ?? 0),
                        expired: Int(row?.int("expired") ?? 0))
    }
}
