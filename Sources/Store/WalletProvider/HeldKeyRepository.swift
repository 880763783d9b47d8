/// One row of `wallet_provider_held_keys` (schema step 11): a private key the provider holds
/// for an account (the NL model's "remote keys"), wrapped; never the key in clear.
public struct HeldKeyRecord: Sendable, Equatable {
    public var provider: String
    public var id: String
    public var account: String
    /// nonce ‖ ciphertext ‖ tag of AES-256-GCM over the private scalar (see `HeldKeys`).
    public var wrappedKey: [UInt8]
    /// The public JWK as JSON text, and its RFC 7638 thumbprint.
    public var publicJWK: String
    public var thumbprint: String
    /// `wallet` (generate_keys, create_proofs), or a recovery flow's own mark (`recovery`,
    /// `renewal`), so the flow can delete or keep exactly its keys.
    public var purpose: String
    public var enabled: Bool
    public var createdAt: Int64

    public init(provider: String, id: String, account: String, wrappedKey: [UInt8], publicJWK: String, thumbprint: String,
                purpose: String = HeldKeyRecord.walletPurpose, enabled: Bool = true, createdAt: Int64) {
        self.provider = provider
        self.id = id
        self.account = account
        self.wrappedKey = wrappedKey
        self.publicJWK = publicJWK
        self.thumbprint = thumbprint
        self.purpose = purpose
        self.enabled = enabled
        self.createdAt = createdAt
    }

    public static let walletPurpose = "wallet"
}

/// The keys the provider holds per account.
public struct HeldKeyRepository: Sendable {
    private let database: Database

    public init(database: Database) { self.database = database }

    public func insert(_ key: HeldKeyRecord) throws(StoreError) {
        try database.execute(
            """
            INSERT INTO wallet_provider_held_keys
                (provider, id, account, wrapped_key, public_jwk, thumbprint, purpose, enabled, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.text(key.provider), .text(key.id), .text(key.account), .blob(key.wrappedKey), .text(key.publicJWK), .text(key.thumbprint),
             .text(key.purpose), .integer(key.enabled ? 1 : 0), .integer(key.createdAt)])
    }

    /// The account's key with this id (nil when it is another account's or none).
    public func find(provider: String, account: String, id: String) throws(StoreError) -> HeldKeyRecord? {
        try database.query("SELECT * FROM wallet_provider_held_keys WHERE provider = ? AND id = ? AND account = ?",
                           [.text(provider), .text(id), .text(account)]).first.map(Self.record)
    }

    /// The account's key with this thumbprint (a PID's `cnf`), if it holds one.
    public func find(provider: String, account: String, thumbprint: String) throws(StoreError) -> HeldKeyRecord? {
        try database.query("SELECT * FROM wallet_provider_held_keys WHERE provider = ? AND thumbprint = ? AND account = ?",
                           [.text(provider), .text(thumbprint), .text(account)]).first.map(Self.record)
    }

    /// The account's keys, oldest first; only those of `purpose` when given.
    public func list(provider: String, account: String, purpose: String? = nil) throws(StoreError) -> [HeldKeyRecord] {
        if let purpose {
            return try database.query(
                "SELECT * FROM wallet_provider_held_keys WHERE provider = ? AND account = ? AND purpose = ? ORDER BY created_at, rowid",
                [.text(provider), .text(account), .text(purpose)]).map(Self.record)
        }
        return try database.query("SELECT * FROM wallet_provider_held_keys WHERE provider = ? AND account = ? ORDER BY created_at, rowid",
                                  [.text(provider), .text(account)]).map(Self.record)
    }

    public func count(provider: String, account: String) throws(StoreError) -> Int64 {
        try database.query("SELECT count(*) AS n FROM wallet_provider_held_keys WHERE provider = ? AND account = ?",
                           [.text(provider), .text(account)]).first?.int("n") ?? 0
    }

    /// Enables or disables the account's keys: those of `purpose`, or with `exceptPurpose`
    /// every key but those (a renewal disables every other key). Returns the rows changed.
    @discardableResult
    public func setEnabled(_ enabled: Bool, provider: String, account: String, purpose: String? = nil,
                           exceptPurpose: String? = nil) throws(StoreError) -> Int {
        var sql = "UPDATE wallet_provider_held_keys SET enabled = ? WHERE provider = ? AND account = ?"
        var parameters: [SQLValue] = [.integer(enabled ? 1 : 0), .text(provider), .text(account)]
        if let purpose { sql += " AND purpose = ?"; parameters.append(.text(purpose)) }
        if let exceptPurpose { sql += " AND purpose <> ?"; parameters.append(.text(exceptPurpose)) }
        return try database.executeCountingChanges(sql, parameters)
    }

    /// Marks keys with another purpose (e.g. `recovery` keys becoming `wallet` keys).
    @discardableResult
    public func setPurpose(_ purpose: String, provider: String, account: String, from: String) throws(StoreError) -> Int {
        try database.executeCountingChanges(
            "UPDATE wallet_provider_held_keys SET purpose = ? WHERE provider = ? AND account = ? AND purpose = ?",
            [.text(purpose), .text(provider), .text(account), .text(from)])
    }

    /// Deletes the account's keys of `purpose` (all with nil); returns the rows removed.
    @discardableResult
    public func delete(provider: String, account: String, purpose: String?) throws(StoreError) -> Int {
        if let purpose {
            return try database.executeCountingChanges(
                "DELETE FROM wallet_provider_held_keys WHERE provider = ? AND account = ? AND purpose = ?",
                [.text(provider), .text(account), .text(purpose)])
        }
        return try database.executeCountingChanges("DELETE FROM wallet_provider_held_keys WHERE provider = ? AND account = ?",
                                                   [.text(provider), .text(account)])
    }

    /// Stores a key's new account and wrapping (device transfer: the key is wrapped again for
    /// the account it moves to); false when there is no such key.
    @discardableResult
    public func update(_ key: HeldKeyRecord) throws(StoreError) -> Bool {
        try database.executeCountingChanges(
            "UPDATE wallet_provider_held_keys SET account = ?, wrapped_key = ? WHERE provider = ? AND id = ?",
            [.text(key.account), .blob(key.wrappedKey), .text(key.provider), .text(key.id)]) == 1
    }

    static func record(_ row: Row) -> HeldKeyRecord {
        HeldKeyRecord(provider: row.text("provider") ?? "", id: row.text("id") ?? "", account: row.text("account") ?? "",
                      wrappedKey: row.blob("wrapped_key") ?? [], publicJWK: row.text("public_jwk") ?? "",
                      thumbprint: row.text("thumbprint") ?? "", purpose: row.text("purpose") ?? HeldKeyRecord.walletPurpose,
                      enabled: (row.int("enabled") ?? 0) != 0, createdAt: row.int("created_at") ?? 0)
    }
}
