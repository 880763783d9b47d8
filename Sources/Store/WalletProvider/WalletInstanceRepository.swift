/// One row of `wallet_provider_instances`.
public struct WalletInstanceRecord: Sendable, Equatable {
    public var provider: String
    /// The `hardware_key_tag`.
    public var id: String
    public var account: String
    /// The hardware public key's JWK (JSON text) and its RFC 7638 thumbprint.
    public var hardwareJWK: String
    public var hardwareJWKThumbprint: String
    /// `dev`, `android` or `apple`.
    public var format: String
    /// What the key attestation said about the device, as JSON text.
    public var deviceFacts: String
    public var state: String
    public var reason: String?
    /// When the hardware key was revoked: attestation requests with it are refused from then on.
    public var revokedAt: Int64?
    public var createdAt: Int64
    public var updatedAt: Int64
    /// The last `integrity_assertion` of a wallet attestation request, stored unchecked, and when.
    public var integrityAssertion: String?
    public var integrityAssertionAt: Int64?

    public init(provider: String, id: String, account: String, hardwareJWK: String, hardwareJWKThumbprint: String,
                format: String, deviceFacts: String, state: String, reason: String? = nil, revokedAt: Int64? = nil, createdAt: Int64, updatedAt: Int64,
                integrityAssertion: String? = nil, integrityAssertionAt: Int64? = nil) {
        self.provider = provider
        self.id = id
        self.account = account
        self.hardwareJWK = hardwareJWK
        self.hardwareJWKThumbprint = hardwareJWKThumbprint
        self.format = format
        self.deviceFacts = deviceFacts
        self.state = state
        self.reason = reason
        self.revokedAt = revokedAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.integrityAssertion = integrityAssertion
        self.integrityAssertionAt = integrityAssertionAt
    }
}

/// Wallet instances and their accounts (`wallet_provider_instances`, `wallet_provider_accounts`).
public struct WalletInstanceRepository: Sendable {
    private let database: Database

    public init(database: Database) { self.database = database }

    /// Stores a new account and its first instance; false (nothing written) when the provider
    /// already has an instance with this id. Call it inside the transaction that also spends
    /// the registration's nonce, so a refused registration leaves neither.
    /// `pinPublicKey`: an NL account's PIN public key (JWK text, issue 21).
    public func insertWithNewAccount(_ instance: WalletInstanceRecord, pinPublicKey: String? = nil) throws(StoreError) -> Bool {
        let inserted = try database.executeCountingChanges(
            """
            INSERT OR IGNORE INTO wallet_provider_instances
                (provider, id, account, hardware_jwk, hardware_jwk_thumbprint, format, device_facts, state, reason,
                 created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.text(instance.provider), .text(instance.id), .text(instance.account), .text(instance.hardwareJWK),
             .text(instance.hardwareJWKThumbprint), .text(instance.format), .text(instance.deviceFacts), .text(instance.state),
             SQLValue(instance.reason), .integer(instance.createdAt), .integer(instance.updatedAt)])
        guard inserted == 1 else { return false }
        try database.execute(
            "INSERT OR IGNORE INTO wallet_provider_accounts (provider, id, created_at, updated_at, pin_public_key) VALUES (?, ?, ?, ?, ?)",
            [.text(instance.provider), .text(instance.account), .integer(instance.createdAt), .integer(instance.createdAt),
             SQLValue(pinPublicKey)])
        return true
    }

    public func find(provider: String, id: String) throws(StoreError) -> WalletInstanceRecord? {
        try database.query("SELECT * FROM wallet_provider_instances WHERE provider = ? AND id = ?",
                           [.text(provider), .text(id)]).first.map(Self.record)
    }

    /// Whether an instance with this id exists (a cheaper read than `find`).
    public func exists(provider: String, id: String) throws(StoreError) -> Bool {
        !(try database.query("SELECT 1 AS found FROM wallet_provider_instances WHERE provider = ? AND id = ?",
                             [.text(provider), .text(id)])).isEmpty
    }

    /// The provider's instances, oldest first; only one account's with `account`.
    public func list(provider: String, account: String? = nil) throws(StoreError) -> [WalletInstanceRecord] {
        if let account {
            return try database.query(
                "SELECT * FROM wallet_provider_instances WHERE provider = ? AND account = ? ORDER BY created_at, id",
                [.text(provider), .text(account)]).map(Self.record)
        }
        return try database.query("SELECT * FROM wallet_provider_instances WHERE provider = ? ORDER BY created_at, id",
                                  [.text(provider)]).map(Self.record)
    }

    /// Every provider's instances, by provider then oldest first (`trustbed instances list`).
    public func listAll() throws(StoreError) -> [WalletInstanceRecord] {
        try database.query("SELECT * FROM wallet_provider_instances ORDER BY provider, created_at, id").map(Self.record)
    }

    /// The providers that have an instance with this id (a tag is unique per provider only):
    /// lets the CLI act on an id without being told the provider when it is unambiguous.
    public func providers(instance id: String) throws(StoreError) -> [String] {
        try database.query("SELECT provider FROM wallet_provider_instances WHERE id = ? ORDER BY provider", [.text(id)])
            .compactMap { $0.text("provider") }
    }

    /// The providers that have an account with this id.
    public func providers(account id: String) throws(StoreError) -> [String] {
        try database.query("SELECT provider FROM wallet_provider_accounts WHERE id = ? ORDER BY provider", [.text(id)])
            .compactMap { $0.text("provider") }
    }

    /// Remembers that `instance` had these wallet keys attested (a key attested again keeps
    /// its first instance).
    public func recordAttestedKeys(provider: String, instance: String, thumbprints: [String], now: Int64) throws(StoreError) {
        for thumbprint in thumbprints {
            try database.execute(
                "INSERT OR IGNORE INTO wallet_provider_attested_keys (provider, thumbprint, instance, created_at) VALUES (?, ?, ?, ?)",
                [.text(provider), .text(thumbprint), .text(instance), .integer(now)])
        }
    }

    /// The instance a wallet key was attested for, if this provider attested it.
    public func instance(provider: String, attestedKey thumbprint: String) throws(StoreError) -> String? {
        try database.query("SELECT instance FROM wallet_provider_attested_keys WHERE provider = ? AND thumbprint = ?",
                           [.text(provider), .text(thumbprint)]).first?.text("instance")
    }

    /// Moves an instance from `from` to `to` (a conditional UPDATE: a concurrent change wins
    /// or loses as a whole); false when it was not in `from`.
    public func transition(provider: String, id: String, from: String, to: String, now: Int64) throws(StoreError) -> Bool {
        try database.executeCountingChanges(
            "UPDATE wallet_provider_instances SET state = ?, updated_at = ? WHERE provider = ? AND id = ? AND state = ?",
            [.text(to), .integer(now), .text(provider), .text(id), .text(from)]) == 1
    }

    /// Keeps the `integrity_assertion` a wallet attestation request carried (unchecked: see
    /// schema step 9); call it in the transaction that spends the request's nonce.
    public func recordIntegrityAssertion(provider: String, id: String, assertion: String, now: Int64) throws(StoreError) {
        try database.execute(
            "UPDATE wallet_provider_instances SET integrity_assertion = ?, integrity_assertion_at = ? WHERE provider = ? AND id = ?",
            [.text(assertion), .integer(now), .text(provider), .text(id)])
    }

    /// Stores an App Attest assertion's counter if it is greater than the stored one; false when
    /// it is not (a replayed or out-of-order assertion). Call it in the transaction that spends
    /// the request's nonce: of two requests with one counter, exactly one wins.
    public func raiseAssertionCounter(provider: String, id: String, to counter: Int64) throws(StoreError) -> Bool {
        try database.executeCountingChanges(
            "UPDATE wallet_provider_instances SET assertion_counter = ? WHERE provider = ? AND id = ? AND assertion_counter < ?",
            [.integer(counter), .text(provider), .text(id), .integer(counter)]) == 1
    }

    /// The stored App Attest assertion counter (0 before the first assertion).
    public func assertionCounter(provider: String, id: String) throws(StoreError) -> Int64? {
        try database.query("SELECT assertion_counter FROM wallet_provider_instances WHERE provider = ? AND id = ?",
                           [.text(provider), .text(id)]).first?.int("assertion_counter")
    }

    /// Revokes an instance's hardware key: `operational` and `valid` go back to `installed`,
    /// `installed` stays, and `revoked_at` makes every later attestation request fail. False
    /// when there is no such instance or it is `uninstalled` (final).
    public func revoke(provider: String, id: String, reason: String?, now: Int64) throws(StoreError) -> Bool {
        try database.executeCountingChanges(
            """
            UPDATE wallet_provider_instances SET state = 'installed', reason = ?, revoked_at = COALESCE(revoked_at, ?), updated_at = ?
            WHERE provider = ? AND id = ? AND state != 'uninstalled'
            """, [SQLValue(reason), .integer(now), .integer(now), .text(provider), .text(id)]) == 1
    }

    /// Marks an instance `uninstalled` (final, from any state); false when there is no such
    /// instance or it already is.
    public func uninstall(provider: String, id: String, reason: String?, now: Int64) throws(StoreError) -> Bool {
        try database.executeCountingChanges(
            """
            UPDATE wallet_provider_instances SET state = 'uninstalled', reason = ?, revoked_at = COALESCE(revoked_at, ?), updated_at = ?
            WHERE provider = ? AND id = ? AND state != 'uninstalled'
            """, [SQLValue(reason), .integer(now), .integer(now), .text(provider), .text(id)]) == 1
    }

    /// Deletes an account and every instance under it, in one transaction; returns the rows
    /// removed (0: no such account).
    public func purgeAccount(provider: String, account: String) throws(StoreError) -> Int {
        try database.atomically { database throws(StoreError) -> Int in
            try database.execute(
                """
                DELETE FROM wallet_provider_attested_keys WHERE provider = ? AND instance IN
                    (SELECT id FROM wallet_provider_instances WHERE provider = ? AND account = ?)
                """, [.text(provider), .text(provider), .text(account)])
            try database.execute(
                """
                DELETE FROM wallet_provider_person_instances WHERE provider = ? AND instance IN
                    (SELECT id FROM wallet_provider_instances WHERE provider = ? AND account = ?)
                """, [.text(provider), .text(provider), .text(account)])
            try database.execute("DELETE FROM wallet_provider_held_keys WHERE provider = ? AND account = ?",
                                 [.text(provider), .text(account)])
            let instances = try database.executeCountingChanges(
                "DELETE FROM wallet_provider_instances WHERE provider = ? AND account = ?", [.text(provider), .text(account)])
            let accounts = try database.executeCountingChanges(
                "DELETE FROM wallet_provider_accounts WHERE provider = ? AND id = ?", [.text(provider), .text(account)])
            return instances + accounts
        }
    }

    /// Whether a single-use value was already spent in the replay records (`issuance_jtis`,
    /// the table `NonceRepository` writes): lets a request be refused for a used nonce before
    /// anything else is checked, while the spending itself stays the one INSERT OR IGNORE.
    public func replayRecorded(issuer: String, purpose: String, jti: String) throws(StoreError) -> Bool {
        !(try database.query("SELECT 1 AS found FROM issuance_jtis WHERE issuer = ? AND purpose = ? AND jti = ?",
                             [.text(issuer), .text(purpose), .text(jti)])).isEmpty
    }

    private static func record(_ row: Row) -> WalletInstanceRecord {
        WalletInstanceRecord(
            provider: row.text("provider") ?? "", id: row.text("id") ?? "", account: row.text("account") ?? "",
            hardwareJWK: row.text("hardware_jwk") ?? "", hardwareJWKThumbprint: row.text("hardware_jwk_thumbprint") ?? "",
            format: row.text("format") ?? "", deviceFacts: row.text("device_facts") ?? "", state: row.text("state") ?? "",
            reason: row.text("reason"), revokedAt: row.int("revoked_at"), createdAt: row.int("created_at") ?? 0, updatedAt: row.int("updated_at") ?? 0,
            integrityAssertion: row.text("integrity_assertion"), integrityAssertionAt: row.int("integrity_assertion_at"))
    }
}
