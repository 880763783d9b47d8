import CBOR
import Cryptography
import Support

/// An App Attest assertion as the hardware signature of an iOS instance's wallet attestation
/// request (issue 20, item 6: "on iOS an App Attest assertion whose counter rises"). The app
/// calls `DCAppAttestService.generateAssertion(keyId, clientDataHash:)` with the SHA-256 of the
/// same compact JSON a plain hardware signature covers (`HardwareSignature.clientData`) and sends
/// base64url of the CBOR `{signature, authenticatorData}`. Checked as Apple's "Validating apps
/// that connect to your server" says under "Verify the assertion":
/// 1-2. nonce = SHA-256(authenticatorData ‖ SHA-256(clientData));
/// 3. `signature` (DER ECDSA, SHA-256) verifies over nonce with the attested key;
/// 4. authenticatorData's rpIdHash is SHA-256 of one of the configured app ids;
/// 5. its counter is greater than the stored one (the caller stores it, atomically with the
///    nonce it spends, so a replayed assertion loses: `WalletInstanceRepository.raiseAssertionCounter`);
/// 6. the challenge is the request's nonce, inside clientData.
public struct AppAttestAssertion: Sendable, Equatable {
    public let signature: [UInt8]
    public let authenticatorData: [UInt8]

    /// authData without attested credential data: rpIdHash (32), flags (1), counter (4).
    static let minimumAuthenticatorData = 37

    /// The assertion in `hardwareSignature`, or nil when it is not one (then it is an ES256
    /// signature, raw or DER, whose base64url never decodes to this CBOR shape).
    public static func decode(_ hardwareSignature: String) -> AppAttestAssertion? {
        guard hardwareSignature.utf8.count <= 4_096, let bytes = Base64URL.decode(hardwareSignature),
              let value = try? CBORValue.decode(bytes), value.mapValue?.count == 2,
              let signature = value["signature"]?.bytesValue, let data = value["authenticatorData"]?.bytesValue,
              data.count >= minimumAuthenticatorData else { return nil }
        return AppAttestAssertion(signature: signature, authenticatorData: data)
    }

    public var rpIDHash: [UInt8] { Array(authenticatorData[0 ..< 32]) }
    public var counter: UInt32 { authenticatorData[33 ..< 37].reduce(0) { $0 << 8 | UInt32($1) } }

    /// Steps 1-4; the counter (step 5) is the caller's, against its stored value.
    public func verify(clientData: [UInt8], key: PublicKey, appIDs: [String]) throws(WalletProviderError) {
        let nonce = Digest.sha256(authenticatorData + Digest.sha256(clientData))
        guard let raw = HardwareSignature.rawFromDER(signature), key.verify(signature: raw, data: nonce, algorithm: .ES256) else {
            throw .refused("hardware_signature: the App Attest assertion's signature does not verify with the attested key")
        }
        guard appIDs.contains(where: { Digest.sha256(Array($0.utf8)) == rpIDHash }) else {
            throw .refused("hardware_signature: the App Attest assertion's rpIdHash is not the SHA-256 of a configured app id")
        }
    }
}
