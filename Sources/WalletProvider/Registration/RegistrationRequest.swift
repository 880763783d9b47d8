import JOSE
import JSON

/// The body of `POST <wp>/wallet-instance` (issue 20, item 4): `{challenge | nonce,
/// key_attestation, hardware_key_tag}`. Read once; every shape error is 400 `bad_request`,
/// this endpoint's own code (IT-Wallet), naming the member.
public struct RegistrationRequest: Sendable, Equatable {
    public let nonce: String
    /// A compact JWT (development), an array of base64 DER certificates (Android) or base64url
    /// CBOR (Apple): its format is read from its shape (`DeviceKeyAttestationFormat.detect`).
    public let keyAttestation: JSONValue
    public let format: DeviceKeyAttestationFormat
    public let hardwareKeyTag: String
    /// An NL account's PIN public key (issue 21): a P-256 public JWK, reduced to its key
    /// members; only accepted when the provider has `remote_keys` on.
    public var pinPublicKey: JWK?

    /// Longest `hardware_key_tag` accepted: Apple key ids are 44 characters, Android aliases
    /// short names.
    public static let maxTagLength = 256

    public static func parse(_ value: JSONValue) throws(WalletProviderError) -> RegistrationRequest {
        guard let object = value.objectValue else { throw .badRequest("the body must be a JSON object") }
        let challenge = try optionalString(object, "challenge")
        let nonceMember = try optionalString(object, "nonce")
        if let challenge, let nonceMember, challenge != nonceMember {
            throw .badRequest("challenge and nonce differ; send one of them")
        }
        guard let nonce = challenge ?? nonceMember, !nonce.isEmpty else {
            throw .badRequest("challenge (or nonce) is missing")
        }
        guard let tag = try optionalString(object, "hardware_key_tag") else { throw .badRequest("hardware_key_tag is missing") }
        try checkTag(tag)
        guard let attestation = object["key_attestation"] else { throw .badRequest("key_attestation is missing") }
        guard let format = DeviceKeyAttestationFormat.detect(attestation) else {
            throw .badRequest("key_attestation must be a non-empty string (development JWT, App Attest) or an array (Android chain)")
        }
        if format == .android, attestation.stringArray == nil {
            throw .badRequest("key_attestation: an Android chain is an array of base64 strings")
        }
        var request = RegistrationRequest(nonce: nonce, keyAttestation: attestation, format: format, hardwareKeyTag: tag)
        if let value = object["pin_public_key"] { request.pinPublicKey = try parsePINKey(value) }
        return request
    }

    /// A P-256 public JWK without private members.
    public static func parsePINKey(_ value: JSONValue, member: String = "pin_public_key") throws(WalletProviderError) -> JWK {
        guard let object = value.objectValue else { throw .badRequest("\(member) must be a P-256 public JWK object") }
        guard object["d"] == nil else { throw .badRequest("\(member) must be a public key (it has d)") }
        do throws(JOSEError) {
            let jwk = try JWK(json: object).keyMembersOnly
            guard jwk.kty == "EC", jwk.json["crv"]?.stringValue == "P-256" else { throw .invalidKey("expected kty EC, crv P-256") }
            _ = try jwk.publicKey()
            return jwk
        } catch {
            throw .badRequest("\(member): \(error)")
        }
    }

    /// A tag of 1 to 256 printable ASCII characters other than `"` and `\`: it goes into the
    /// client data unescaped (`ClientDataHash`), so every JSON library writes the same bytes.
    public static func checkTag(_ tag: String) throws(WalletProviderError) {
        guard !tag.isEmpty, tag.utf8.count <= maxTagLength,
              tag.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) else {
            throw .badRequest("hardware_key_tag must be 1 to \(maxTagLength) printable ASCII characters without \" or \\")
        }
    }

    static func optionalString(_ object: [String: JSONValue], _ name: String) throws(WalletProviderError) -> String? {
        guard let value = object[name] else { return nil }
        guard let text = value.stringValue else { throw .badRequest("\(name) must be a string") }
        return text
    }

    public init(nonce: String, keyAttestation: JSONValue, format: DeviceKeyAttestationFormat, hardwareKeyTag: String) {
        self.nonce = nonce
        self.keyAttestation = keyAttestation
        self.format = format
        self.hardwareKeyTag = hardwareKeyTag
    }
}

/// The body of `POST <wp>/dev/key-attestation`: `{"jwk", "hardware_key_tag", "nonce",
/// "integrity": "pass" | "fail"}` (integrity defaults to pass).
public struct DevKeyAttestationRequest: Sendable {
    public let jwk: [String: JSONValue]
    public let hardwareKeyTag: String
    public let nonce: String
    public let integrity: Bool

    public static func parse(_ value: JSONValue) throws(WalletProviderError) -> DevKeyAttestationRequest {
        guard let object = value.objectValue else { throw .badRequest("the body must be a JSON object") }
        guard let jwk = object["jwk"]?.objectValue else { throw .badRequest("jwk must be the hardware public key as a JWK object") }
        guard let tag = try RegistrationRequest.optionalString(object, "hardware_key_tag") else {
            throw .badRequest("hardware_key_tag is missing")
        }
        try RegistrationRequest.checkTag(tag)
        let nonceMember = try RegistrationRequest.optionalString(object, "nonce")
        let challenge = try RegistrationRequest.optionalString(object, "challenge")
        guard let nonce = nonceMember ?? challenge, !nonce.isEmpty else { throw .badRequest("nonce is missing") }
        let integrity = try RegistrationRequest.optionalString(object, "integrity") ?? "pass"
        guard integrity == "pass" || integrity == "fail" else { throw .badRequest("integrity must be \"pass\" or \"fail\"") }
        return DevKeyAttestationRequest(jwk: jwk, hardwareKeyTag: tag, nonce: nonce, integrity: integrity == "pass")
    }
}
