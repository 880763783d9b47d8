import Store

/// What device transfer needs from the accounts (the NL remote-key accounts own these facts):
/// declared here, by the domain, and implemented over the account repository. Every call runs
/// inside the transaction of the transfer step that makes it, so a step changes the session
/// and the accounts together or not at all.
public protocol TransferAccounts: Sendable {
    /// The account's state (`active`, `transferring`, `transferred`, ...); nil for no such account.
    func state(of account: String) throws(StoreError) -> String?
    /// Moves the account from `from` to `to`; false when it was not in `from`.
    func moveState(of account: String, from: String, to: String, now: Int64) throws(StoreError) -> Bool
    /// Whether both accounts hold the same recovery code (both disclosed one, and they match).
    func sameRecoveryCode(_ first: String, _ second: String) throws(StoreError) -> Bool
    /// Hands every key the provider holds for `source` to `destination` (complete_transfer);
    /// a key that cannot be moved is the server's fault (`WalletProviderError.serverError`).
    func moveKeys(from source: String, to destination: String, now: Int64) throws
}

/// The account states device transfer reads and writes.
public enum TransferAccountState {
    public static let active = "active"
    public static let transferring = "transferring"
    public static let transferred = "transferred"
}
