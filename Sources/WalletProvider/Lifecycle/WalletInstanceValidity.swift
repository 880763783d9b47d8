import Store

/// Item 8's `valid` state, driven by a PID Provider hosted on the same server: it calls these in
/// process (the composition root wires them; no HTTP to itself) with the issuer of the key
/// attestation on the PID's proof and the PID's `cnf` key thumbprint. Works on the shared
/// database alone, so it needs no reference to a running `WalletProvider`: a key attestation
/// issuer that is not a Wallet Provider hosted here simply matches no row.
///
/// An instance past `installed` is `valid` while it holds a live PID (status `valid`, not
/// expired, not reported `credential_deleted`) on a key this provider attested for it, else
/// `operational` (`WalletInstanceValidityRepository`). These calls and every read of the
/// instances bring the stored state up to date, so an expired PID shows at the next read.
public struct WalletInstanceValidity: Sendable {
    private let repository: WalletInstanceValidityRepository
    private let instances: WalletInstanceRepository

    public init(database: Database) {
        repository = WalletInstanceValidityRepository(database: database)
        instances = WalletInstanceRepository(database: database)
    }

    /// What a PID issued to an attested key changed.
    public struct Issued: Sendable, Equatable {
        /// The instance the key was attested for, and its state now.
        public var instance: String
        public var state: String
        /// The same person's live credentials on other instances, now `invalid` (one `valid`
        /// instance per person); their instances are `operational` again.
        public var superseded: [SupersededCredential]
    }

    /// A PID of `persona` went to a key `provider` attested: its instance goes `operational` →
    /// `valid` (an `installed` one has no wallet attestation and stays; a revoked key never gets
    /// here, the provider refuses to attest for it), and the person's PIDs on any other
    /// instance of this provider are set `invalid`. nil for a key this provider never attested.
    public func pidIssued(provider: String, keyThumbprint: String, persona: String, now: Int64) throws(StoreError) -> Issued? {
        try repository.credentialIssued(provider: provider, keyThumbprint: keyThumbprint, persona: persona, now: now)
            .map { Issued(instance: $0.instance, state: $0.state, superseded: $0.superseded) }
    }

    /// A PID was revoked, or its holder reported `credential_deleted`: its instance goes back
    /// to `operational` unless it still holds another live PID. Returns the instance when it changed.
    @discardableResult
    public func pidWithdrawn(provider: String, keyThumbprint: String, now: Int64) throws(StoreError) -> String? {
        guard let instance = try instances.instance(provider: provider, attestedKey: keyThumbprint) else { return nil }
        return try repository.settle(provider: provider, instance: instance, now: now).first?.id
    }

    /// Settles every instance of `provider` (nil: of every provider): PIDs that expired since.
    @discardableResult
    public func settle(provider: String?, now: Int64) throws(StoreError) -> [(id: String, state: String)] {
        try repository.settle(provider: provider, now: now)
    }
}
