import JSON

/// Reads the optional `app_version` of `disclose_recovery_code` (the NL wallet sends it so a
/// device transfer can compare versions): a semantic version when present.
func readAppVersion(_ params: JSONReader) throws(JSONReadError) -> String? {
    guard let text = try params.optionalString("app_version") else { return nil }
    guard AppVersion(text) != nil else { throw params.invalid("app_version", "expected a semantic version such as 1.2.3") }
    return text
}

/// Where a device transfer starts (issue 21, item 5): the first recovery code disclosure of a
/// newly activated account whose code another `active` account already holds is the same
/// person's new phone, so the provider opens a transfer session with it as the destination and
/// answers `{"transfer_session_id"}` (the NL wallet's `DiscloseRecoveryCodeResult`). The
/// disclosure's `app_version` is the destination's version, which the source's must not exceed;
/// a disclosure without one opens no session.
/// A retried disclosure (now `matched`) of an active account with a `created` session gets
/// that session again rather than a plain "matched".
public enum TransferStartTransition: RecoveryCodeTransition {
    public static func afterDisclosure(_ disclosure: RecoveryCodeDisclosure,
                                       in context: InstructionContext) throws(WalletProviderError) -> JSONValue? {
        guard context.account.state == WalletAccountState.active.rawValue else { return nil }
        switch disclosure.outcome {
        case .heldByOtherAccount:
            // The NL wallet always sends its version; a disclosure without one is not starting a
            // transfer (a wallet that knows nothing of transfers just stores its code).
            guard let text = disclosure.appVersion, let version = AppVersion(text) else { return nil }
            let session = try context.provider.transfers.create(destination: context.account.id, appVersion: version, now: context.now)
            context.provider.logger.info("transfer session \(session.id) on \(context.provider.entityID) created for account \(context.account.id)")
            return ["transfer_session_id": .string(session.id)]
        case .matched:
            guard let open = try context.provider.transfers.openCreatedSession(destination: context.account.id, now: context.now) else { return nil }
            return ["transfer_session_id": .string(open.id)]
        case .stored, .mismatch:
            return nil
        }
    }
}
