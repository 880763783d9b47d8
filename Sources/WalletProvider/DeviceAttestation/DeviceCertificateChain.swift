import Cryptography
import JOSE
import Support

/// What the Android and Apple verifiers share: reading a device's certificate chain, validating
/// it to the configured roots with OpenSSL, and the attested key as a JWK.
enum DeviceCertificateChain {
    /// Parses DER certificates (leaf first) and validates the path to `roots` at `time`.
    /// Every entry but the leaf is an untrusted helper (a device sends its root too; only the
    /// configured copy is trusted). No CRL: Google publishes revocation as a JSON status list
    /// and Apple publishes none for App Attest, and a test bed checks offline.
    /// `strict: false` because device chains bend RFC 5280's encoding rules (Android leaves are
    /// written by the TEE, with serial 1 and no key identifiers).
    static func verify(
        _ ders: [[UInt8]], roots: [Certificate], at time: Int64, maximumLength: Int
    ) throws(DeviceAttestationError) -> [Certificate] {
        guard !ders.isEmpty else { throw .invalid("empty certificate chain") }
        guard ders.count <= maximumLength else {
            throw .invalid("certificate chain of \(ders.count) certificates; at most \(maximumLength)")
        }
        var chain: [Certificate] = []
        for (index, der) in ders.enumerated() {
            do throws(CertificateError) { chain.append(try Certificate(der: der)) } catch {
                throw .invalid("certificate \(index) of the chain is not DER X.509: \(error.reason)")
            }
        }
        guard !roots.isEmpty else { throw .invalid("no attestation roots are configured") }
        do throws(CertificateError) {
            try Certificate.verifyChain(
                leaf: chain[0], intermediates: Array(chain.dropFirst()), roots: roots, at: time, strict: false
            )
        } catch {
            throw .invalid("certificate chain does not validate to the attestation roots: \(error)")
        }
        return chain
    }

    /// Standard base64 (what Android's and Apple's APIs give) or base64url, padded or not.
    static func decodeBase64(_ text: String) -> [UInt8]? {
        var normalized = ""
        normalized.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "+": normalized.append("-")
            case "/": normalized.append("_")
            case "=": continue
            default: normalized.unicodeScalars.append(character)
            }
        }
        guard !normalized.isEmpty else { return nil }
        return Base64URL.decode(normalized)
    }

    /// The leaf's public key as a JWK (its RFC 7638 thumbprint binds it to the client data hash).
    static func publicKey(of certificate: Certificate) throws(DeviceAttestationError) -> (PublicKey, JWK) {
        do throws(CryptoError) {
            let key = try certificate.publicKey()
            return (key, JWK(publicKey: key, use: nil))
        } catch {
            throw .invalid("the attested key is not a supported public key")
        }
    }

    /// Whether the attested key is the one the caller expects, compared by RFC 7638 thumbprint
    /// (so `kid`, `use` and other metadata members of the expected JWK do not matter).
    static func requireKey(_ attested: JWK, equals expected: JWK?) throws(DeviceAttestationError) {
        guard let expected else { return }
        guard attested.thumbprint() == expected.thumbprint() else {
            throw .invalid("the attested key is not the hardware key")
        }
    }
}
