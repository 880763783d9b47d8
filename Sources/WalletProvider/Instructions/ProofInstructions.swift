import JOSE
import JSON

/// `issue_key_attestation` `{"key_ids": [...], "nonce"?: <the issuer's c_nonce>}` →
/// `{"key_attestation"}`: an OpenID4VCI 1.0 Appendix D.1 `key-attestation+jwt` for keys the
/// account holds, the same statement `<wp>/key-attestations` makes for keys on the device.
public enum IssueKeyAttestationInstruction: Instruction {
    public struct Params: Sendable {
        public let keyIDs: [String]
        public let nonce: String?
    }

    public static let name = "issue_key_attestation"
    public static let allowedStates: Set<WalletAccountState> = [.active]

    public static func parseParams(_ params: JSONReader) throws(JSONReadError) -> Params {
        Params(keyIDs: try readKeyIDs(params, required: true) ?? [], nonce: try params.optionalField("nonce")?.nonEmptyString())
    }

    public static func perform(_ params: Params, in context: InstructionContext) throws(WalletProviderError) -> JSONValue {
        var keys: [HeldKey] = []
        for (i, id) in params.keyIDs.enumerated() { keys.append(try context.heldKey(id, what: "key_ids[\(i)]")) }
        return ["key_attestation": .string(try context.keyAttestation(for: keys, nonce: params.nonce))]
    }
}

/// `create_proofs` `{"aud": <credential issuer>, "nonce"?: <c_nonce>, "key_ids"?: [...] |
/// "count"?: 1..10, "iss"?: <client_id>}` → `{"proofs": [...], "keys": [{"key_id", "jwk"}],
/// "key_attestation"}`: OpenID4VCI 1.0 `jwt` proofs (`openid4vci-proof+jwt`, Appendix F.1) by
/// the named held keys, or by `count` keys generated for it (default 1; the NL backend's
/// PerformIssuance), each carrying the keys' attestation (nonce = the c_nonce) in its
/// `key_attestation` header with `kid` = the key's index, as the PID Providers expect. A wallet
/// sends `proofs` as `{"proofs": {"jwt": [...]}}` in its credential request.
/// Unknown params are ignored, so the recovery flows can add theirs (`renewal`).
public enum CreateProofsInstruction: Instruction {
    public struct Params: Sendable {
        public let audience: String
        public let nonce: String?
        public let keyIDs: [String]?
        public let count: Int
        public let clientID: String?
        /// `renewal: true`: PID renewal (`PIDRenewal`, i-nlrec's file).
        public var renewal = false
    }

    public static let name = "create_proofs"
    /// `renewing` only for a retried renewal (`perform` refuses the rest).
    public static let allowedStates: Set<WalletAccountState> = [.active, .renewing]

    public static func parseParams(_ params: JSONReader) throws(JSONReadError) -> Params {
        let ids = try readKeyIDs(params, required: false)
        let count = try params.optionalInt("count")
        if ids != nil, count != nil { throw params.invalid("count", "send key_ids or count, not both") }
        if let count, count < 1 || count > 10 { throw params.invalid("count", "expected 1 to 10") }
        var parsed = Params(audience: try params.nonEmptyString("aud"), nonce: try params.optionalField("nonce")?.nonEmptyString(),
                            keyIDs: ids, count: Int(count ?? 1), clientID: try params.optionalField("iss")?.nonEmptyString())
        parsed.renewal = try PIDRenewal.parseFlag(params, keyIDs: ids)
        return parsed
    }

    public static func perform(_ params: Params, in context: InstructionContext) throws(WalletProviderError) -> JSONValue {
        var keys: [HeldKey] = []
        if params.renewal || context.account.state != WalletAccountState.active.rawValue {
            keys = try PIDRenewal.start(params.renewal, count: params.count, in: context)
        } else if let ids = params.keyIDs {
            for (i, id) in ids.enumerated() { keys.append(try context.heldKey(id, what: "key_ids[\(i)]")) }
        } else {
            keys = try context.generateKeys(count: params.count)
        }
        let made = try context.proofs(keys: keys, audience: params.audience, nonce: params.nonce, clientID: params.clientID)
        return ["proofs": .array(made.proofs.map(JSONValue.string)),
                "keys": .array(keys.map { ["key_id": .string($0.id), "jwk": $0.jwk.jsonValue] }),
                "key_attestation": .string(made.keyAttestation)]
    }
}
