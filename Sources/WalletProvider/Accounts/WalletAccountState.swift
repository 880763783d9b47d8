/// The states of an NL account (issue 21, item 1), as the NL wallet's backend keeps them:
/// the recovery flows move an account through them and every instruction declares the states
/// it is accepted in (`Instruction.allowedStates`).
public enum WalletAccountState: String, Sendable, CaseIterable {
    /// Usable: every instruction signed by the right PIN.
    case active
    /// `pin_attempts` wrong PINs in a row: only PIN recovery is accepted.
    case blocked
    /// PIN recovery started (a new PIN key is pending); a matching recovery code finishes it.
    case recoveringPIN = "recovering_pin"
    /// PID renewal started (the other keys disabled); a matching recovery code finishes it.
    case renewing
    /// The source of a device transfer that was confirmed.
    case transferring
    /// The source of a completed transfer: its keys moved to the destination account. Final.
    case transferred
    /// Revoked by an admin. Final.
    case revoked

    /// States that never change again.
    public var isFinal: Bool { self == .transferred || self == .revoked }

    /// Every state but the final ones and `blocked`: what most instructions accept.
    public static let usable: Set<WalletAccountState> = [.active, .recoveringPIN, .renewing, .transferring]
}
