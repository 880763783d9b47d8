/// A credential that lost its standing because another instance of the same person got a PID.
public struct SupersededCredential: Sendable, Equatable {
    /// The issued-credential record's id and issuer (the PID Provider whose status list shows it).
    public var id: String
    public var issuer: String
    /// The wallet instance whose attested key held it.
    public var instance: String

    public init(id: String, issuer: String, instance: String) {
        self.id = id
        self.issuer = issuer
        self.instance = instance
    }
}

/// Item 8's `valid` state, computed from the issued-credential records: an instance that is
/// past `installed` is `valid` while it holds a live PID (a PID Provider hosted on this server
/// issued a credential to a key this Wallet Provider attested for it, with status `valid`, not
/// expired, and no `credential_deleted` notification), else `operational`. The state column is
/// a stored copy brought up to date (`settle`) when a PID is issued or withdrawn, when anyone
/// reads the instances, and by the purge loop; so a PID that merely expires is seen at the next
/// read without a timer of its own.
public struct WalletInstanceValidityRepository: Sendable {
    private let database: Database

    public init(database: Database) { self.database = database }

    /// True when `wallet_provider_instances` row `i` holds a live credential at `?1` (now).
    /// Reads `wallet_provider_attested_keys (provider, instance)` and `issued_credentials
    /// (key_thumbprint)`, both indexed (schema step 8), newest key first (a scalar subquery with
    /// LIMIT, since SQLite drops the ORDER BY of an EXISTS): the newest PID is the
    /// one most likely live, so an instance with thousands of revoked PIDs is not walked
    /// through all of them.
    private static let holdsLivePID = """
        (SELECT 1 FROM wallet_provider_attested_keys k
         JOIN issued_credentials c ON c.key_thumbprint = k.thumbprint AND c.key_attestation_issuer = k.provider
         WHERE k.provider = wallet_provider_instances.provider AND k.instance = wallet_provider_instances.id
           AND c.status = 0 AND c.expires_at > ?1
           AND (c.notification_event IS NULL OR c.notification_event <> 'credential_deleted')
         ORDER BY k.rowid DESC LIMIT 1) IS NOT NULL
        """

    /// Brings `operational`/`valid` instances in line with their credentials: of one provider
    /// (nil: every provider), of one instance (nil: all). Returns the instances that changed,
    /// with their new state. `installed` (no wallet attestation yet, or revoked) and
    /// `uninstalled` are never touched.
    @discardableResult
    public func settle(provider: String?, instance: String? = nil, now: Int64) throws(StoreError) -> [(id: String, state: String)] {
        // One statement per scope, each with plain equalities: `(? IS NULL OR provider = ?)`
        // would make SQLite scan every instance for the one an issuance touches.
        var scope = "1"
        var parameters: [SQLValue] = [.integer(now)]
        if let provider {
            scope = "provider = ?2"
            parameters.append(.text(provider))
            if let instance {
                scope += " AND id = ?3"
                parameters.append(.text(instance))
            }
        }
        return try database.query(
            """
            UPDATE wallet_provider_instances
            SET state = CASE WHEN \(Self.holdsLivePID) THEN 'valid' ELSE 'operational' END, updated_at = ?1
            WHERE \(scope) AND state IN ('operational', 'valid')
              AND state <> CASE WHEN \(Self.holdsLivePID) THEN 'valid' ELSE 'operational' END
            RETURNING id, state
            """, parameters).map { ($0.text("id") ?? "", $0.text("state") ?? "") }
    }

    /// A credential went to `keyThumbprint`, which `provider` attested: settles that key's
    /// instance, and when it is now `valid`, makes it the person's only valid instance (item 8:
    /// one `valid` instance per person): the live credentials of `persona` held by the
    /// provider's other instances past `installed` are set `invalid` (status 1, which their
    /// status lists show at once) and those instances settle back to `operational`. All in one
    /// transaction. nil when the key is not one this provider attested.
    public func credentialIssued(provider: String, keyThumbprint: String, persona: String,
                                 now: Int64) throws(StoreError) -> (instance: String, state: String, superseded: [SupersededCredential])? {
        try database.atomically { database throws(StoreError) in
            guard let instance = try database.query(
                "SELECT instance FROM wallet_provider_attested_keys WHERE provider = ? AND thumbprint = ?",
                [.text(provider), .text(keyThumbprint)]).first?.text("instance") else { return nil }
            try database.execute(
                "INSERT OR IGNORE INTO wallet_provider_person_instances (provider, persona, instance) VALUES (?, ?, ?)",
                [.text(provider), .text(persona), .text(instance)])
            try settle(provider: provider, instance: instance, now: now)
            let state = try database.query("SELECT state FROM wallet_provider_instances WHERE provider = ? AND id = ?",
                                           [.text(provider), .text(instance)]).first?.text("state") ?? ""
            guard state == "valid" else { return (instance, state, []) }
            let others = try database.query(
                """
                SELECT p.instance FROM wallet_provider_person_instances p
                JOIN wallet_provider_instances i ON i.provider = p.provider AND i.id = p.instance
                WHERE p.provider = ? AND p.persona = ? AND p.instance <> ? AND i.state IN ('operational', 'valid')
                """, [.text(provider), .text(persona), .text(instance)]).compactMap { $0.text("instance") }
            var superseded: [SupersededCredential] = []
            for other in others {
                // Every live credential on the other instance's keys, in one pass over them: the
                // person's are set invalid, and whether any other one remains is the instance's
                // new state, what `settle` would find walking its keys twice more (an instance
                // that got many PIDs has many keys, and each pass probes every one).
                let live = try database.query(
                    """
                    SELECT c.id, c.issuer, c.persona FROM wallet_provider_attested_keys k
                    JOIN issued_credentials c ON c.key_thumbprint = k.thumbprint AND c.key_attestation_issuer = k.provider
                    WHERE k.provider = ?2 AND k.instance = ?3 AND c.status = 0 AND c.expires_at > ?1
                      AND (c.notification_event IS NULL OR c.notification_event <> 'credential_deleted')
                    ORDER BY c.issued_at, c.rowid
                    """, [.integer(now), .text(provider), .text(other)])
                let credentials = live.filter { $0.text("persona") == persona }.map {
                    SupersededCredential(id: $0.text("id") ?? "", issuer: $0.text("issuer") ?? "", instance: other)
                }
                for credential in credentials {
                    try database.execute("UPDATE issued_credentials SET status = 1 WHERE id = ?", [.text(credential.id)])
                }
                // The person holds nothing live there any more; a new PID there adds the row again.
                try database.execute("DELETE FROM wallet_provider_person_instances WHERE provider = ? AND persona = ? AND instance = ?",
                                     [.text(provider), .text(persona), .text(other)])
                let settled = live.count > credentials.count ? "valid" : "operational"
                try database.execute(
                    """
                    UPDATE wallet_provider_instances SET state = ?1, updated_at = ?2
                    WHERE provider = ?3 AND id = ?4 AND state IN ('operational', 'valid') AND state <> ?1
                    """, [.text(settled), .integer(now), .text(provider), .text(other)])
                superseded += credentials
            }
            return (instance, state, superseded)
        }
    }
}
