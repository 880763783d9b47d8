import CBOR
import Cryptography
import MDoc

/// Opens and verifies Apple's identity envelope (Verify with Wallet; Apple's guide "Verifying
/// Wallet identity requests"): the envelope's algorithm and mode, that it was sealed to our key
/// (`pkRHash`) for this request (`infoHash` of the SessionTranscript built from the nonce, the
/// merchant and team identifiers), HPKE base mode open (RFC 9180; DHKEM(P-256, HKDF-SHA256),
/// HKDF-SHA256, AES-128-GCM, `info` = the SessionTranscript bytes, empty aad), then the
/// `{"identity": DeviceResponse}` inside, verified as an ISO 18013-5 reader does with that same
/// SessionTranscript. Every step is a check in the report; the first that makes the rest
/// meaningless stops it.
public struct AppleIdentityVerifier: Sendable {
    public let recipientKey: PrivateKey
    public let merchantID: String
    public let teamID: String
    /// IACA roots the mdoc's document signer must chain to.
    public var trustAnchors: [Certificate]
    public var expectedDocType: String?

    public init(recipientKey: PrivateKey, merchantID: String, teamID: String, trustAnchors: [Certificate],
                expectedDocType: String? = nil) {
        self.recipientKey = recipientKey
        self.merchantID = merchantID
        self.teamID = teamID
        self.trustAnchors = trustAnchors
        self.expectedDocType = expectedDocType
    }

    /// The hashes `pkRHash` may carry: Apple's guide says "the SHA256 hash of the recipient
    /// public key" without naming the encoding, so both usual ones are accepted and the report
    /// says which matched. The uncompressed point is what Apple's sample verifiers hash.
    public func recipientKeyHashes() -> [(encoding: String, hash: [UInt8])] {
        var hashes: [(String, [UInt8])] = []
        if let point = recipientKey.publicKey.uncompressedPoint {
            hashes.append(("the uncompressed point 0x04||X||Y", Digest.sha256(point)))
        }
        if let spki = try? recipientKey.publicKey.derSubjectPublicKeyInfo() {
            hashes.append(("the DER SubjectPublicKeyInfo", Digest.sha256(spki)))
        }
        return hashes
    }

    public func verify(envelope bytes: [UInt8], nonce: [UInt8], at time: Int64) -> VerificationReport {
        var report = VerificationReport()
        let envelope: AppleIdentityEnvelope
        do {
            envelope = try AppleIdentityEnvelope(decoding: bytes)
            report.pass("envelope", "CBOR HPKEEnvelope")
        } catch {
            report.fail("envelope", "\(error)")
            return report
        }
        guard !nonce.isEmpty else {
            report.fail("nonce", "the request nonce is empty")
            return report
        }
        if envelope.algorithm == AppleIdentityEnvelope.algorithmName {
            report.pass("algorithm", envelope.algorithm)
        } else {
            report.fail("algorithm", "\"\(envelope.algorithm)\", expected \"\(AppleIdentityEnvelope.algorithmName)\"")
        }
        if envelope.mode == UInt64(HPKE.modeBase) {
            report.pass("mode", "0 (HPKE base mode)")
        } else {
            report.fail("mode", "\(envelope.mode), expected 0 (HPKE base mode)")
        }
        guard report.verified else { return report }

        guard let matched = recipientKeyHashes().first(where: { ConstantTime.equal($0.hash, envelope.pkRHash) }) else {
            report.fail("recipient_key", "pkRHash is the SHA-256 of neither the uncompressed point nor the DER "
                        + "SubjectPublicKeyInfo of our encryption key: the envelope was sealed to another key")
            return report
        }
        report.pass("recipient_key", "pkRHash = SHA-256 of \(matched.encoding) of our encryption key")

        let transcript = SessionTranscript.appleIdentityPresentment(
            nonce: nonce, merchantID: merchantID, teamID: teamID, pkRHash: envelope.pkRHash)
        guard ConstantTime.equal(Digest.sha256(transcript.bytes), envelope.infoHash) else {
            report.fail("info_hash", "infoHash is not the SHA-256 of the SessionTranscript for this nonce, merchant "
                        + "\(merchantID) and team \(teamID): the envelope answers another request")
            return report
        }
        report.pass("info_hash", "SHA-256 of the SessionTranscript [null, null, [\"AppleIdentityPresentment_1.0\", nonce, "
                    + "merchant, team, pkRHash]]")

        let plaintext: [UInt8]
        do {
            plaintext = try HPKE.open(envelope.data, enc: envelope.pkEm, recipient: recipientKey, info: transcript.bytes)
            report.pass("hpke_open", "DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-128-GCM; \(plaintext.count) bytes")
        } catch {
            report.fail("hpke_open", Self.describe(error))
            return report
        }

        let response: DeviceResponse
        do {
            response = try Self.identity(in: plaintext)
            report.pass("identity", "{\"identity\": DeviceResponse}")
        } catch {
            report.fail("identity", "\(error)")
            return report
        }
        var verifier = DeviceResponseVerifier(trustAnchors: trustAnchors, expectedDocType: expectedDocType)
        verifier.singleDocument = true
        report.add(verifier.verify(response, sessionTranscript: transcript, at: time))
        return report
    }

    /// The decrypted plaintext: a CBOR map whose "identity" is the DeviceResponse (a map, or
    /// its encoding in a byte string).
    static func identity(in plaintext: [UInt8]) throws -> DeviceResponse {
        let value: CBORValue
        do { value = try CBORValue.decode(plaintext) } catch { throw CBORFieldError(path: "plaintext", reason: "\(error)") }
        let field = try CBORField(value, path: "plaintext").map().required("identity")
        if let bytes = field.value.bytesValue { return try DeviceResponse(decoding: bytes) }
        return try DeviceResponse(field.value)
    }

    static func describe(_ error: CipherError) -> String {
        switch error {
        case .authenticationFailed:
            return "the AES-GCM tag does not verify: the data was changed, or sealed with another info or key"
        case .keyAgreementFailed(let why): return "pkEm: \(why)"
        case .invalidTagLength(let count): return "data is \(count) bytes, shorter than the 16-byte tag"
        default: return "\(error)"
        }
    }
}
