/// One row of `wallet_provider_accounts` (schema steps 6 and 11): the person behind one or more
/// wallet instances, and for NL accounts (issue 21) the PIN key, the wrong-PIN count and the
/// HMAC of the recovery code.
public struct WalletAccountRecord: Sendable, Equatable {
    public var provider: String
    public var id: String
    /// `active`, `blocked`, `recovering_pin`, `renewing`, `transferring`, `transferred`, `revoked`.
    public var state: String
    /// The PIN public key's JWK as JSON text; nil for accounts registered without one.
    public var pinPublicKey: String?
    public var pinFailures: Int64
    /// Base64url HMAC-SHA256 of the recovery code under the provider's key (never the code).
    public var recoveryCodeHMAC: String?
    /// A PIN key waiting for a matching disclosure (PIN recovery), and the state an account was
    /// in before a recovery flow began, so a mismatch restores it exactly.
    public var pendingPINPublicKey: String?
    public var previousState: String?
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(provider: String, id: String, state: String, pinPublicKey: String?, pinFailures: Int64, recoveryCodeHMAC: String?,
                pendingPINPublicKey: String? = nil, previousState: String? = nil, createdAt: Int64, updatedAt: Int64) {
        self.provider = provider
        self.id = id
        self.state = state
        self.pinPublicKey = pinPublicKey
        self.pinFailures = pinFailures
        self.recoveryCodeHMAC = recoveryCodeHMAC
        self.pendingPINPublicKey = pendingPINPublicKey
        self.previousState = previousState
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// Accounts' NL state (issue 21). Every write is one conditional statement, so a concurrent
/// change wins or loses as a whole; call them inside the transaction that spends the
/// instruction's challenge, so a refused instruction changes nothing.
public struct WalletAccountRepository: Sendable {
    private let database: Database

    public init(database: Database) { self.database = database }

    public func find(provider: String, id: String) throws(StoreError) -> WalletAccountRecord? {
        try database.query("SELECT * FROM wallet_provider_accounts WHERE provider = ? AND id = ?",
                           [.text(provider), .text(id)]).first.map(Self.record)
    }

    /// The provider's accounts, oldest first.
    public func list(provider: String) throws(StoreError) -> [WalletAccountRecord] {
        try database.query("SELECT * FROM wallet_provider_accounts WHERE provider = ? ORDER BY created_at, id", [.text(provider)]).map(Self.record)
    }

    /// Sets the PIN public key of a new account (registration, in its transaction).
    public func setPINPublicKey(provider: String, id: String, jwk: String, now: Int64) throws(StoreError) {
        try database.execute(
            "UPDATE wallet_provider_accounts SET pin_public_key = ?, pin_failures = 0, updated_at = ? WHERE provider = ? AND id = ?",
            [.text(jwk), .integer(now), .text(provider), .text(id)])
    }

    /// Counts a wrong PIN; at `maxAttempts` the account becomes `blocked` (from any state but
    /// the final ones). Returns the count and state after the change.
    public func recordPINFailure(provider: String, id: String, maxAttempts: Int64,
                                 now: Int64) throws(StoreError) -> (failures: Int64, state: String)? {
        try database.query(
            """
            UPDATE wallet_provider_accounts
            SET pin_failures = pin_failures + 1, updated_at = ?3,
                state = CASE WHEN pin_failures + 1 >= ?4 AND state NOT IN ('transferred', 'revoked') THEN 'blocked' ELSE state END
            WHERE provider = ?1 AND id = ?2
            RETURNING pin_failures, state
            """, [.text(provider), .text(id), .integer(now), .integer(maxAttempts)]).first.map {
                ($0.int("pin_failures") ?? 0, $0.text("state") ?? "")
            }
    }

    /// A right PIN: the count starts again (no write when it is already 0).
    public func resetPINFailures(provider: String, id: String) throws(StoreError) {
        try database.execute("UPDATE wallet_provider_accounts SET pin_failures = 0 WHERE provider = ? AND id = ? AND pin_failures <> 0",
                             [.text(provider), .text(id)])
    }

    /// Moves the account from one of `from` to `to`; false (nothing written) when it was in
    /// none of them. `rememberPrevious` keeps the old state in `previous_state`.
    public func transition(provider: String, id: String, from: Set<String>, to: String, rememberPrevious: Bool = false,
                           now: Int64) throws(StoreError) -> Bool {
        guard !from.isEmpty else { return false }
        let placeholders = Array(repeating: "?", count: from.count).joined(separator: ", ")
        let previous = rememberPrevious ? "previous_state = state," : ""
        return try database.executeCountingChanges(
            "UPDATE wallet_provider_accounts SET \(previous) state = ?, updated_at = ? WHERE provider = ? AND id = ? AND state IN (\(placeholders))",
            [.text(to), .integer(now), .text(provider), .text(id)] + from.sorted().map { .text($0) }) == 1
    }

    /// Sets the state whatever it was (admin actions; the recovery flows' restore).
    public func setState(provider: String, id: String, state: String, previousState: String?, now: Int64) throws(StoreError) {
        try database.execute(
            "UPDATE wallet_provider_accounts SET state = ?, previous_state = ?, updated_at = ? WHERE provider = ? AND id = ?",
            [.text(state), SQLValue(previousState), .integer(now), .text(provider), .text(id)])
    }

    /// The pending PIN key of a PIN recovery (nil clears it).
    public func setPendingPINPublicKey(provider: String, id: String, jwk: String?, now: Int64) throws(StoreError) {
        try database.execute(
            "UPDATE wallet_provider_accounts SET pending_pin_public_key = ?, updated_at = ? WHERE provider = ? AND id = ?",
            [SQLValue(jwk), .integer(now), .text(provider), .text(id)])
    }

    /// Stores the recovery code's HMAC when the account has none yet; false when it has one.
    public func storeRecoveryCodeHMAC(provider: String, id: String, hmac: String, now: Int64) throws(StoreError) -> Bool {
        try database.executeCountingChanges(
            """
            UPDATE wallet_provider_accounts SET recovery_code_hmac = ?, updated_at = ?
            WHERE provider = ? AND id = ? AND recovery_code_hmac IS NULL
            """, [.text(hmac), .integer(now), .text(provider), .text(id)]) == 1
    }

    /// The other accounts of this provider holding this recovery code's HMAC in one of `states`.
    public func accounts(provider: String, recoveryCodeHMAC hmac: String, states: Set<String>,
                         excluding account: String) throws(StoreError) -> [String] {
        try database.query(
            """
            SELECT id, state FROM wallet_provider_accounts
            WHERE provider = ? AND recovery_code_hmac = ? AND id <> ? ORDER BY created_at, id
            """, [.text(provider), .text(hmac), .text(account)]).filter { states.contains($0.text("state") ?? "") }.compactMap { $0.text("id") }
    }

    /// The status (0 valid, 1 invalid, 2 suspended) of the credential at this status list entry,
    /// from the issued-credential records of the PID Providers in this file; nil when none is.
    public func credentialStatus(uri: String, index: Int64) throws(StoreError) -> Int64? {
        // Through the list's id: the (status_list, status_index) index of schema step 4.
        try database.query(
            "SELECT c.status AS status FROM status_lists l JOIN issued_credentials c ON c.status_list = l.id AND c.status_index = ? WHERE l.uri = ?",
            [.integer(index), .text(uri)]).first?.int("status")
    }

    static func record(_ row: Row) -> WalletAccountRecord {
        WalletAccountRecord(
            provider: row.text("provider") ?? "", id: row.text("id") ?? "", state: row.text("state") ?? "active",
            pinPublicKey: row.text("pin_public_key"), pinFailures: row.int("pin_failures") ?? 0,
            recoveryCodeHMAC: row.text("recovery_code_hmac"), pendingPINPublicKey: row.text("pending_pin_public_key"),
            previousState: row.text("previous_state"), createdAt: row.int("created_at") ?? 0, updatedAt: row.int("updated_at") ?? 0)
    }
}
