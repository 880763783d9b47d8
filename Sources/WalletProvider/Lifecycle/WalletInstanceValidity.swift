import Store

/// Item 8's `valid` state, driven by a PID Provider hosted on the same server: it calls these in
/// process (the composition root wires them; no HTTP to itself) with the issuer of the key
/// attestation on the PID's proof and the PID's `cnf` key thumbprint. Works on the shared
/// database alone, so it needs no reference to a running `WalletProvider`: a key attestation
/// issuer that is not a Wallet Provider hosted here simply matches no row.
public struct WalletInstanceValidity: Sendable {
    private let repository: WalletInstanceRepository

    public init(database: Database) { repository = WalletInstanceRepository(database: database) }

    /// A PID went to a key `provider` attested: its instance goes `operational` → `valid`
    /// (an `installed` one has no wallet attestation and stays; a revoked key never gets here,
    /// the provider refuses to attest for it). Returns the instance when it changed.
    @discardableResult
    public func pidIssued(provider: String, keyThumbprint: String, now: Int64) throws(StoreError) -> String? {
        guard let instance = try repository.instance(provider: provider, attestedKey: keyThumbprint) else { return nil }
        return try repository.transition(provider: provider, id: instance, from: WalletInstanceState.operational.rawValue,
                                         to: WalletInstanceState.valid.rawValue, now: now) ? instance : nil
    }

    /// That PID was revoked, or its holder reported `credential_deleted`: `valid` → `operational`.
    @discardableResult
    public func pidWithdrawn(provider: String, keyThumbprint: String, now: Int64) throws(StoreError) -> String? {
        guard let instance = try repository.instance(provider: provider, attestedKey: keyThumbprint) else { return nil }
        return try repository.transition(provider: provider, id: instance, from: WalletInstanceState.valid.rawValue,
                                         to: WalletInstanceState.operational.rawValue, now: now) ? instance : nil
    }
}
