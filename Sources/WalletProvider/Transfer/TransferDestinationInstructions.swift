import JSON

/// `receive_payload` `{"transfer_session_id"}` (the destination polls): `{"state": "pending"}`
/// until the source sent its wallet, then `{"state": "ready", "encrypted_payload"}` (again on
/// a retry, until `complete_transfer`); `{"state": "cancelled"}` once cancelled or expired.
public enum ReceivePayloadInstruction: Instruction {
    public static let name = "receive_payload"
    public static let allowedStates: Set<WalletAccountState> = [.active]

    public static func parseParams(_ params: JSONReader) throws(JSONReadError) -> String { try readTransferSessionID(params) }

    public static func perform(_ id: String, in context: InstructionContext) throws(WalletProviderError) -> JSONValue {
        switch try context.provider.transfers.receive(id: id, destination: context.account.id, now: context.now) {
        case .pending: return ["state": "pending"]
        case .cancelled: return ["state": "cancelled"]
        case .payload(let payload): return ["state": "ready", "encrypted_payload": .string(payload)]
        }
    }
}

/// `complete_transfer` `{"transfer_session_id"}` (the destination, after decrypting the
/// payload): the source's held keys become this account's, the session `completed`, the source
/// account `transferred` (its instances get no more wallet attestations).
public enum CompleteTransferInstruction: Instruction {
    public static let name = "complete_transfer"
    public static let allowedStates: Set<WalletAccountState> = [.active]

    public static func parseParams(_ params: JSONReader) throws(JSONReadError) -> String { try readTransferSessionID(params) }

    public static func perform(_ id: String, in context: InstructionContext) throws(WalletProviderError) -> JSONValue {
        let session = try context.provider.transfers.complete(id: id, destination: context.account.id, now: context.now)
        return ["transfer_session_id": .string(session.id), "state": .string(session.state)]
    }
}
