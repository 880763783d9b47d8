import JSON

/// A recovery flow's reaction to a verified `disclose_recovery_code` (issue 21, items 3-5): PIN
/// recovery and renewal finish on `matched` (and undo on `mismatch`), a device transfer starts
/// on `heldByOtherAccount`. Called in order inside the instruction's transaction, after the
/// code was stored or compared; the first non-nil answer is the instruction's `result`. A
/// transition that must keep its writes and still refuse calls `context.refuseAfterCommit`;
/// throwing rolls everything back (the account stays as it was, the challenge unspent).
public protocol RecoveryCodeTransition: Sendable {
    static func afterDisclosure(_ disclosure: RecoveryCodeDisclosure, in context: InstructionContext) throws(WalletProviderError) -> JSONValue?
}

/// THE HOOK: where the recovery flows plug in. Each flow adds its type on its own line below.
public enum RecoveryCodeTransitions {
    public static let all: [any RecoveryCodeTransition.Type] = [
        // PIN recovery and PID renewal (items 3-4):
        RecoveryFlowTransition.self,

        // Device transfer (item 5):
        TransferStartTransition.self,

    ]
}
