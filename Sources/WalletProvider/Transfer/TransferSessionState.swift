import Store

/// The states of a device transfer session (issue 21, item 5; the seed's state machine):
///
///     created ──confirm (source)──▶ ready_for_transfer ──send (source)──▶ ready_for_download ──complete (destination)──▶ completed
///                                        │                                     │
///                                        └──────cancel (either side)───────────┴──▶ cancelled
///
/// and every open state goes to `cancelled` when the session outlives `transfer_lifetime`.
public enum TransferSessionState: String, Sendable, CaseIterable {
    case created
    case readyForTransfer = "ready_for_transfer"
    case readyForDownload = "ready_for_download"
    case completed
    case cancelled

    /// Whether the session can still change (and can expire).
    public var isOpen: Bool { self != .completed && self != .cancelled }

    /// Whether a side may cancel from here: only once both sides are paired (the seed); an
    /// unconfirmed session just expires. The admin may end any open session.
    public var isCancellableBySide: Bool { self == .readyForTransfer || self == .readyForDownload }

    /// What `check_transfer_status` tells the source: the wallet only needs to know whether to
    /// keep waiting, to give up, or that its wallet now lives on the new phone.
    public var sourceStatus: String {
        switch self {
        case .created, .readyForTransfer, .readyForDownload: "pending"
        case .completed: "completed"
        case .cancelled: "cancelled"
        }
    }
}

/// Who moved a session to its final state (kept in `ended_by`, shown to the admin).
public enum TransferActor: String, Sendable {
    case source, destination, admin, expiry
}

extension TransferSessionRecord {
    /// The typed state; a value this build does not know reads as `cancelled`, the state that
    /// lets nothing further happen.
    public var sessionState: TransferSessionState { TransferSessionState(rawValue: state) ?? .cancelled }

    /// Which side `account` is of this session, if either.
    public func side(of account: String) -> TransferActor? {
        if account == destination { return .destination }
        if let source, account == source { return .source }
        return nil
    }
}
