import Cryptography
import JOSE
import JSON

/// The Android and Apple verifiers (`DeviceAttestation/`) as registration sees them: the
/// binding's client data hash for the attested key, or (as the IO wallet sends it) the bare
/// nonce, is an acceptable challenge; their refusals map to the IT-Wallet codes (403
/// `invalid_request`, 403 `integrity_check_error` for a device failing integrity).
struct AndroidKeyAttestationVerifier: DeviceKeyAttestationVerifier {
    let verifier: AndroidKeyAttestation
    var format: DeviceKeyAttestationFormat { .android }

    func verify(_ attestation: JSONValue, binding: KeyAttestationBinding, now: Int64) throws(WalletProviderError)
        -> VerifiedKeyAttestation {
        guard let chain = attestation.stringArray, !chain.isEmpty else {
            throw .refused("Android key attestation: expected an array of base64 DER certificates, leaf first")
        }
        do throws(DeviceAttestationError) {
            let attested = try verifier.verify(chain: chain, challenges: binding.acceptableChallenges, at: now)
            return VerifiedKeyAttestation(format: .android, hardwareKey: attested.publicKey, device: attested.facts)
        } catch {
            throw WalletProviderError(deviceError: error, format: "Android key attestation")
        }
    }
}

struct AppleAppAttestVerifier: DeviceKeyAttestationVerifier {
    let verifier: AppleAppAttest
    var format: DeviceKeyAttestationFormat { .apple }

    func verify(_ attestation: JSONValue, binding: KeyAttestationBinding, now: Int64) throws(WalletProviderError)
        -> VerifiedKeyAttestation {
        guard let object = attestation.stringValue else { throw .refused("App Attest: expected a base64url CBOR string") }
        do throws(DeviceAttestationError) {
            let attested = try verifier.verify(attestation: object, hardwareKeyTag: binding.hardwareKeyTag,
                                               clientDataHashes: binding.acceptableChallenges, at: now)
            return VerifiedKeyAttestation(format: .apple, hardwareKey: attested.publicKey, device: attested.facts)
        } catch {
            throw WalletProviderError(deviceError: error, format: "App Attest")
        }
    }
}

extension KeyAttestationBinding {
    /// The challenges a hardware attestation may carry for `key`: SHA-256 of the client data
    /// (`ClientDataHash`), or the bare nonce's bytes.
    @Sendable func acceptableChallenges(_ key: JWK) -> [[UInt8]] {
        [clientDataHash(jwkThumbprint: key.thumbprint()), Array(nonce.utf8)]
    }
}

extension WalletProviderError {
    init(deviceError error: DeviceAttestationError, format: String) {
        self.init(error.isIntegrityFailure ? .integrityCheckError : .invalidRequest, "\(format): \(error.reason)")
    }
}

extension WalletProvider {
    /// The Android and Apple verifiers under `roots` (the shipped defaults when empty).
    public static func hardwareVerifiers(androidRoots: [Certificate], appleRoots: [Certificate], appleAppIDs: [String])
        -> [any DeviceKeyAttestationVerifier] {
        [AndroidKeyAttestationVerifier(verifier: AndroidKeyAttestation(
            roots: androidRoots.isEmpty ? AttestationRoots.googleHardwareAttestation() : androidRoots)),
         AppleAppAttestVerifier(verifier: AppleAppAttest(
            roots: appleRoots.isEmpty ? AttestationRoots.appleAppAttestation() : appleRoots, appIDs: appleAppIDs))]
    }
}
