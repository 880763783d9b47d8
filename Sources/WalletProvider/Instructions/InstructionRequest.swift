import JOSE
import JSON

/// The body of `POST <wp>/instructions/<name>` (issue 21), read once:
/// `{"instruction": <compact JWS>, "hardware_signature": <base64url>}`.
/// - `instruction`: `typ` `wp-instruction+jwt`, ES256 by the PIN key (or the key the
///   instruction names, see `InstructionSigner`); claims `iss` = the instance (its
///   `hardware_key_tag`), `aud` = the provider's entity ID, `challenge` (from
///   `<wp>/instructions/challenge`), `iat`, `params` (an object; absent is `{}`).
/// - `hardware_signature`: the instance's hardware key's ECDSA P-256/SHA-256 signature over the
///   ASCII bytes of the `instruction` compact JWS, base64url of raw r‖s or of DER (what Android
///   keystores give); an App Attest instance may send an assertion with those bytes as client
///   data (`HardwareSignature`, `AppAttestAssertion`), as in wallet attestation requests. The
///   hardware signature covers the PIN signature, so neither can be swapped.
/// Shape errors are 400 `bad_request`, this provider's code for a malformed body.
public struct InstructionRequest: Sendable {
    public static let type = "wp-instruction+jwt"
    /// The longest instruction read: a device transfer's payload (`send_wallet_payload`, up to
    /// `EncryptedTransferPayload.maximumLength`, 1 MiB) travels base64url-encoded in its claims,
    /// 4/3 of its size; JWS's default (256 KiB) would cut it to under 200 KB.
    public static let maximumLength = EncryptedTransferPayload.maximumLength / 3 * 4 + 64 * 1024
    /// The instruction route's request body limit: the longest instruction and its hardware
    /// signature, above the server's 1 MiB (which every other route keeps).
    public static let maximumBodyLength = maximumLength + 8 * 1024

    public let compact: String
    public let jws: JWS
    public let instance: String
    public let audience: [String]
    public let challenge: String
    public let issuedAt: Int64
    public let params: [String: JSONValue]
    public let hardwareSignature: String

    public static func parse(_ value: JSONValue) throws(WalletProviderError) -> InstructionRequest {
        guard let object = value.objectValue else { throw .badRequest("the body must be a JSON object") }
        guard let compact = object["instruction"]?.stringValue, !compact.isEmpty else {
            throw .badRequest("instruction must be the compact wp-instruction+jwt")
        }
        guard let hardwareSignature = object["hardware_signature"]?.stringValue, !hardwareSignature.isEmpty else {
            throw .badRequest("hardware_signature is missing")
        }
        let jws: JWS
        let claims: [String: JSONValue]
        do throws(JOSEError) { (jws, claims) = try JWS.parseClaims(compact, maximumLength: maximumLength) } catch {
            throw .badRequest("instruction is not a readable JWT: \(error)")
        }
        guard jws.type == type else { throw .badRequest("the instruction's typ must be \(type)") }
        let read = DeviceRequestClaims(claims: claims)
        let iat = try read.issuedAt()
        let audience = try read.audience()
        var params: [String: JSONValue] = [:]
        if let value = claims["params"] {
            guard let object = value.objectValue else { throw .invalidInstruction("params must be an object") }
            params = object
        }
        return InstructionRequest(compact: compact, jws: jws, instance: try read.string("iss"), audience: audience,
                                  challenge: try read.string("challenge"), issuedAt: iat, params: params, hardwareSignature: hardwareSignature)
    }
}

/// `POST <wp>/instructions/challenge` `{"instance": <hardware_key_tag>}`.
public struct InstructionChallengeRequest: Sendable {
    public let instance: String

    public static func parse(_ value: JSONValue) throws(WalletProviderError) -> InstructionChallengeRequest {
        guard let instance = value.objectValue?["instance"]?.stringValue, !instance.isEmpty else {
            throw .badRequest("the body must be {\"instance\": <hardware_key_tag>}")
        }
        return InstructionChallengeRequest(instance: instance)
    }
}
