import JSON
import Store

/// The end of PIN recovery (issue 21, item 3; the NL backend's DiscloseRecoveryCodePinRecovery):
/// what a `disclose_recovery_code` does to an account in `recovering_pin`. Runs inside the
/// disclosure's transaction.
///
/// - Matching code, PID bound to one of the recovery keys `start_pin_recovery` made: the pending
///   PIN key becomes the PIN key (the wrong-PIN count starts again), the recovery keys are
///   deleted (their PID only proved who the person is; the wallet keeps its PID), and the account
///   is `active`.
/// - Matching code, PID bound to another key: refused (403 `invalid_request`), nothing changes:
///   only a PID issued within this recovery proves the person came back through the PID Provider.
/// - Mismatch: nothing changes here (the disclosure answers `recovery_code_mismatch`): the account
///   stays `recovering_pin` with its old PIN key, keys and code intact and no PIN usable until a
///   matching disclosure (or another `start_pin_recovery`).
public enum PINRecovery {
    /// The purpose of the keys `start_pin_recovery` makes for the PID of the recovery.
    public static let keyPurpose = "recovery"

    /// The matching disclosure of a PID bound to `pidKey` (its `cnf` key's record); returns the
    /// account's new state.
    public static func complete(in context: InstructionContext, pidKey: HeldKeyRecord) throws(WalletProviderError) -> WalletAccountState {
        guard pidKey.purpose == keyPurpose else {
            throw .refused("PIN recovery needs the PID issued to one of start_pin_recovery's keys; this one is bound to another key")
        }
        let provider = context.provider.entityID
        let account = context.account.id
        guard let pending = context.account.pendingPINPublicKey else {
            throw WalletProviderError(.serverError, "an account in recovering_pin has no pending PIN key", cause: account)
        }
        try context.store { () throws(StoreError) in
            let accounts = context.accounts
            try accounts.setPINPublicKey(provider: provider, id: account, jwk: pending, now: context.now)
            try accounts.setPendingPINPublicKey(provider: provider, id: account, jwk: nil, now: context.now)
            try accounts.setState(provider: provider, id: account, state: WalletAccountState.active.rawValue, previousState: nil,
                                  now: context.now)
            try context.heldKeyRecords.delete(provider: provider, account: account, purpose: keyPurpose)
        }
        context.provider.logger.info("account \(account) on \(provider): PIN recovered")
        return .active
    }
}
