import JSON

/// Reads `transfer_session_id`: the UUID the destination's QR code carried.
func readTransferSessionID(_ params: JSONReader) throws(JSONReadError) -> String {
    let id = try params.nonEmptyString("transfer_session_id")
    guard id.utf8.count <= 64 else { throw params.invalid("transfer_session_id", "at most 64 characters") }
    return id
}

/// `confirm_transfer_session` `{"transfer_session_id", "app_version"}` (the source, after
/// scanning the destination's QR code; the NL wallet's `pair_transfer`): the session becomes
/// `ready_for_transfer` and the source account `transferring`. Both accounts must hold the same
/// recovery code and the destination's app must be at least the source's version.
public enum ConfirmTransferSessionInstruction: Instruction {
    public struct Params: Sendable {
        public let sessionID: String
        public let appVersion: AppVersion
    }

    public static let name = "confirm_transfer_session"
    public static let allowedStates: Set<WalletAccountState> = [.active, .transferring]

    public static func parseParams(_ params: JSONReader) throws(JSONReadError) -> Params {
        let id = try readTransferSessionID(params)
        guard let version = AppVersion(try params.nonEmptyString("app_version")) else {
            throw params.invalid("app_version", "expected a semantic version such as 1.2.3")
        }
        return Params(sessionID: id, appVersion: version)
    }

    public static func perform(_ params: Params, in context: InstructionContext) throws(WalletProviderError) -> JSONValue {
        let session = try context.provider.transfers.confirm(id: params.sessionID, source: context.account.id, appVersion: params.appVersion,
                                                             now: context.now)
        return ["transfer_session_id": .string(session.id), "state": .string(session.state)]
    }
}

/// `send_wallet_payload` `{"transfer_session_id", "encrypted_payload"}`: the source's wallet,
/// a compact JWE (ECDH-ES + A256GCM) to the destination's key, at most 1 MiB; the session
/// becomes `ready_for_download`. The provider stores and forwards it, never decrypts it.
public enum SendWalletPayloadInstruction: Instruction {
    public struct Params: Sendable {
        public let sessionID: String
        public let payload: String
    }

    public static let name = "send_wallet_payload"
    public static let allowedStates: Set<WalletAccountState> = [.transferring]

    public static func parseParams(_ params: JSONReader) throws(JSONReadError) -> Params {
        let id = try readTransferSessionID(params)
        let payload = try params.string("encrypted_payload")
        do throws(WalletProviderError) { try EncryptedTransferPayload.validate(payload) } catch {
            throw params.invalid("encrypted_payload", error.description)
        }
        return Params(sessionID: id, payload: payload)
    }

    public static func perform(_ params: Params, in context: InstructionContext) throws(WalletProviderError) -> JSONValue {
        let session = try context.provider.transfers.send(id: params.sessionID, source: context.account.id, payload: params.payload,
                                                          now: context.now)
        return ["transfer_session_id": .string(session.id), "state": .string(session.state)]
    }
}

/// `check_transfer_status` `{"transfer_session_id"}` → `{"state": "pending" | "cancelled" |
/// "completed"}`: what the source polls for after sending (either side may ask). Accepted in
/// `transferred` too: that is how the source learns its wallet moved.
public enum CheckTransferStatusInstruction: Instruction {
    public static let name = "check_transfer_status"
    public static let allowedStates: Set<WalletAccountState> = [.active, .transferring, .transferred]

    public static func parseParams(_ params: JSONReader) throws(JSONReadError) -> String { try readTransferSessionID(params) }

    public static func perform(_ id: String, in context: InstructionContext) throws(WalletProviderError) -> JSONValue {
        let session = try context.provider.transfers.status(id: id, account: context.account.id, now: context.now)
        return ["state": .string(session.sessionState.sourceStatus)]
    }
}

/// `cancel_transfer` `{"transfer_session_id"}`, from either side once the source confirmed:
/// the session is `cancelled` and the source account `active` again.
public enum CancelTransferInstruction: Instruction {
    public static let name = "cancel_transfer"
    public static let allowedStates: Set<WalletAccountState> = [.active, .transferring]

    public static func parseParams(_ params: JSONReader) throws(JSONReadError) -> String { try readTransferSessionID(params) }

    public static func perform(_ id: String, in context: InstructionContext) throws(WalletProviderError) -> JSONValue {
        let session = try context.provider.transfers.cancel(id: id, account: context.account.id, now: context.now)
        return ["transfer_session_id": .string(session.id), "state": .string(session.state)]
    }
}
