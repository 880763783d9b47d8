import JOSE
import JSON
import Support

/// `generate_keys` `{"count": 1..10}` (default 1) → `{"keys": [{"key_id", "jwk"}]}`: new P-256
/// keys the provider holds for the account (the NL backend's GenerateKey, with the ids chosen
/// by the provider).
public enum GenerateKeysInstruction: Instruction {
    public static let name = "generate_keys"
    public static let allowedStates: Set<WalletAccountState> = [.active]
    public static let maxCount: Int64 = 10

    public static func parseParams(_ params: JSONReader) throws(JSONReadError) -> Int {
        let count = try params.optionalInt("count") ?? 1
        guard count >= 1, count <= maxCount else { throw params.invalid("count", "expected 1 to \(maxCount)") }
        return Int(count)
    }

    public static func perform(_ count: Int, in context: InstructionContext) throws(WalletProviderError) -> JSONValue {
        let keys = try context.generateKeys(count: count)
        return ["keys": .array(keys.map { ["key_id": .string($0.id), "jwk": $0.jwk.jsonValue] })]
    }
}

/// `sign` `{"key_id", "payload": <base64url bytes>}` → `{"key_id", "signature": <base64url>}`:
/// the held key's ECDSA P-256/SHA-256 signature over the payload bytes, raw r‖s (64 bytes), as
/// the NL backend's Sign instruction returns a bare ECDSA signature and leaves the envelope
/// (a JWS's signing input, a COSE Sig_structure) to the wallet.
public enum SignInstruction: Instruction {
    public struct Params: Sendable {
        public let keyID: String
        public let payload: [UInt8]
    }

    public static let name = "sign"
    public static let allowedStates: Set<WalletAccountState> = [.active]
    /// Largest payload: a JWS signing input or a COSE structure, never a document.
    public static let maxPayload = 64 * 1024

    public static func parseParams(_ params: JSONReader) throws(JSONReadError) -> Params {
        let keyID = try params.nonEmptyString("key_id")
        let text = try params.string("payload")
        guard let payload = Base64URL.decode(text) else { throw params.invalid("payload", "expected base64url bytes") }
        guard payload.count <= maxPayload else { throw params.invalid("payload", "at most \(maxPayload) bytes") }
        return Params(keyID: keyID, payload: payload)
    }

    public static func perform(_ params: Params, in context: InstructionContext) throws(WalletProviderError) -> JSONValue {
        let key = try context.heldKey(params.keyID)
        let signature: [UInt8]
        do { signature = try key.privateKey.sign(params.payload, algorithm: .ES256) } catch {
            throw WalletProviderError(.serverError, "the payload could not be signed", cause: "\(error)")
        }
        return ["key_id": .string(key.id), "signature": .string(Base64URL.encode(signature))]
    }
}

/// Reads `key_ids`: 1 to 10 distinct ids.
func readKeyIDs(_ params: JSONReader, required: Bool) throws(JSONReadError) -> [String]? {
    guard let ids = try params.optionalStringArray("key_ids") else {
        if required { _ = try params.field("key_ids") }
        return nil
    }
    guard !ids.isEmpty, ids.count <= 10, Set(ids).count == ids.count else {
        throw params.invalid("key_ids", "expected 1 to 10 distinct key ids")
    }
    return ids
}
