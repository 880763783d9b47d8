import JOSE
import JSON

/// The device key attestation formats a registration may carry (issue 20, item 5): this
/// provider's development JWT, Android Key Attestation (a certificate chain), Apple App Attest
/// (a CBOR attestation object). The value's shape tells them apart (`detect`).
public enum DeviceKeyAttestationFormat: String, Sendable, CaseIterable {
    case dev
    case android
    case apple

    /// A JSON array is an Android chain; a string with two dots a development JWT; any other
    /// string an App Attest object (base64url CBOR). nil for anything else.
    public static func detect(_ value: JSONValue) -> DeviceKeyAttestationFormat? {
        if value.arrayValue != nil { return .android }
        guard let text = value.stringValue, !text.isEmpty else { return nil }
        return text.utf8.count(where: { $0 == UInt8(ascii: ".") }) == 2 ? .dev : .apple
    }
}

/// What a key attestation must be bound to: the registration's nonce and `hardware_key_tag`,
/// and the client data hash made of them and the attested key's thumbprint (`ClientDataHash`).
public struct KeyAttestationBinding: Sendable, Equatable {
    public let nonce: String
    public let hardwareKeyTag: String

    public init(nonce: String, hardwareKeyTag: String) {
        self.nonce = nonce
        self.hardwareKeyTag = hardwareKeyTag
    }

    /// The client data hash for a hardware key with this RFC 7638 thumbprint.
    public func clientDataHash(jwkThumbprint: String) -> [UInt8] {
        ClientDataHash.digest(nonce: nonce, hardwareKeyTag: hardwareKeyTag, jwkThumbprint: jwkThumbprint)
    }
}

/// A key attestation that passed its format's checks: the hardware public key it attests and
/// what it says about the device.
public struct VerifiedKeyAttestation: Sendable {
    public let format: DeviceKeyAttestationFormat
    public let hardwareKey: JWK
    public let device: DeviceFacts

    public init(format: DeviceKeyAttestationFormat, hardwareKey: JWK, device: DeviceFacts) {
        self.format = format
        self.hardwareKey = hardwareKey
        self.device = device
    }
}

/// A verifier of one device key attestation format. It checks the attestation's signature
/// and roots and its binding: the challenge it carries must be the client data hash of
/// `binding` for the key it attests (or, for Android and Apple, the bare nonce, as the IO
/// wallet sends it), and its key id the `hardware_key_tag` where the format has one. It
/// throws `WalletProviderError.refused` (403 `invalid_request`) for anything unreadable,
/// badly signed, off its roots or unbound; a device failing integrity is NOT its refusal: it
/// reports `device.integrity = false` and the registration answers `integrity_check_error`.
public protocol DeviceKeyAttestationVerifier: Sendable {
    var format: DeviceKeyAttestationFormat { get }
    func verify(_ attestation: JSONValue, binding: KeyAttestationBinding, now: Int64) throws(WalletProviderError)
        -> VerifiedKeyAttestation
}
