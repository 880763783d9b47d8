import Cryptography
import JSON
import Store
import Support

/// What a disclosed recovery code meant for the account (issue 21, item 2), decided in the
/// instruction's transaction by `InstructionContext.recordRecoveryCode`.
public enum RecoveryCodeOutcome: Sendable, Equatable {
    /// The account had no code: this one is now its code.
    case stored
    /// The account's code, disclosed again.
    case matched
    /// Another code than the account's: nothing is stored.
    case mismatch
    /// The account had no code, and another `active` account of this provider holds this one
    /// (the same person's old phone: a device transfer's start). The code is stored here too.
    case heldByOtherAccount(String)
}

/// A verified disclosure, as the recovery flows' transitions see it.
public struct RecoveryCodeDisclosure: Sendable {
    /// Base64url HMAC-SHA256 of the code under the provider's key; the code itself is not kept.
    public let hmac: String
    public let outcome: RecoveryCodeOutcome
    /// The PID's issuer and the RFC 7638 thumbprint of its `cnf.jwk`.
    public let issuer: String
    public let keyThumbprint: String
    /// The held key the PID is bound to, when the account holds it (else a key-binding JWT
    /// proved possession of a device key).
    public let heldKey: HeldKeyRecord?
}

extension WalletProvider {
    /// HMAC-SHA256 of the code under `recovery-code-hmac.key`, base64url: what the database keeps.
    public func recoveryCodeHMAC(_ code: String) -> String {
        Base64URL.encode(HMAC.sha256(key: keys.recoveryCodeKey, data: Array(code.utf8)))
    }
}

extension InstructionContext {
    /// The first-store / must-match rule (item 2), inside the instruction's transaction: an
    /// account without a code stores this one (`stored`, or `heldByOtherAccount` when another
    /// active account holds it); an account with one compares in constant time (`matched` or
    /// `mismatch`, which changes nothing). The recovery flows call it from their own
    /// instructions too, after their state transitions.
    public func recordRecoveryCode(hmac: String) throws(WalletProviderError) -> RecoveryCodeOutcome {
        let provider = self.provider.entityID
        let accounts = self.accounts
        guard let current = try store({ () throws(StoreError) in try accounts.find(provider: provider, id: account.id) }) else {
            throw WalletProviderError(.notFound, "the account was deleted")
        }
        if let stored = current.recoveryCodeHMAC {
            return ConstantTime.equal(Array(stored.utf8), Array(hmac.utf8)) ? .matched : .mismatch
        }
        let others = try store { () throws(StoreError) in
            try accounts.accounts(provider: provider, recoveryCodeHMAC: hmac, states: [WalletAccountState.active.rawValue], excluding: account.id)
        }
        _ = try store { () throws(StoreError) in try accounts.storeRecoveryCodeHMAC(provider: provider, id: account.id, hmac: hmac, now: now) }
        if let other = others.first { return .heldByOtherAccount(other) }
        return .stored
    }
}
