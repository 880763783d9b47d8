import JSON

/// PIN recovery and PID renewal on `disclose_recovery_code` (issue 21, items 3 and 4): the
/// `RecoveryCodeTransition` of an account in `recovering_pin` or `renewing`; any other state is
/// left to the disclosure itself. Inside the disclosure's transaction.
///
/// | state | outcome | effect |
/// | --- | --- | --- |
/// | `recovering_pin` | matched | `PINRecovery.complete`: new PIN key, recovery keys deleted, `active` |
/// | `recovering_pin` | mismatch | nothing (403 `recovery_code_mismatch`, all rolled back) |
/// | `renewing` | matched, or the account's first code | `PIDRenewal.complete`: keys enabled, `active` |
/// | `renewing` | mismatch | `PIDRenewal.abandon` kept, then 403 `recovery_code_mismatch` |
///
/// A PID bound to a key the device holds (a key-binding JWT, no held key) finishes neither: the
/// flows need the PID issued to the keys they made.
public enum RecoveryFlowTransition: RecoveryCodeTransition {
    public static func afterDisclosure(_ disclosure: RecoveryCodeDisclosure,
                                       in context: InstructionContext) throws(WalletProviderError) -> JSONValue? {
        switch WalletAccountState(rawValue: context.account.state) {
        case .recoveringPIN:
            guard case .matched = disclosure.outcome else { return nil }
            guard let key = disclosure.heldKey else {
                throw .refused("PIN recovery needs the PID issued to one of start_pin_recovery's keys")
            }
            let state = try PINRecovery.complete(in: context, pidKey: key)
            return ["recovery_code": "matched", "account_state": .string(state.rawValue), "pin_recovery": "completed"]
        case .renewing:
            switch disclosure.outcome {
            case .mismatch:
                try PIDRenewal.abandon(in: context)
                context.refuseAfterCommit(WalletProviderError(
                    .recoveryCodeMismatch, "the new PID's recovery code is not this account's; the renewal was undone"))
                return ["renewal": "abandoned"]
            case .matched, .stored, .heldByOtherAccount:
                guard let key = disclosure.heldKey else {
                    throw .refused("PID renewal needs the new PID, issued to one of the renewal's keys")
                }
                // `stored`/`heldByOtherAccount`: the account's first code (renewal then doubles as
                // the first PID); a device transfer starts from a fresh `active` account, not here.
                let state = try PIDRenewal.complete(in: context, pidKey: key)
                let code: JSONValue = disclosure.outcome == .matched ? "matched" : "stored"
                return ["recovery_code": code, "account_state": .string(state.rawValue), "renewal": "completed"]
            }
        default:
            return nil
        }
    }
}
