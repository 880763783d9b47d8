/// Every instruction of `POST <wp>/instructions/<name>` (issue 21). Each lives in its own file;
/// adding one is adding its type here.
public enum InstructionRegistry {
    public static let all: [any Instruction.Type] = [
        GenerateKeysInstruction.self,
        SignInstruction.self,
        IssueKeyAttestationInstruction.self,
        CreateProofsInstruction.self,
        DiscloseRecoveryCodeInstruction.self,
        // PIN recovery (Recovery/).
        StartPINRecoveryInstruction.self,
        // Device transfer (Transfer/).
        ConfirmTransferSessionInstruction.self,
        SendWalletPayloadInstruction.self,
        CheckTransferStatusInstruction.self,
        ReceivePayloadInstruction.self,
        CompleteTransferInstruction.self,
        CancelTransferInstruction.self,
    ]

    /// By name, built once.
    static let byName: [String: any Instruction.Type] = Dictionary(all.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })

    public static func named(_ name: String) -> (any Instruction.Type)? { byName[name] }
}
