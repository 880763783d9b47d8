import CBOR
import COSE
import Cryptography
import MDoc
import Verification
import XCTest

/// Apple's identity envelope (APPLE-HPKE-v1): opened and verified check by check, and every
/// mismatch (algorithm, mode, pkRHash, infoHash, tag, pkEm, docType, digests, device signature,
/// untrusted root) refused with its own reason.
final class AppleIdentityVerifierTests: XCTestCase {
    private static let signed: Int64 = 1_710_000_000
    private let now = AppleIdentityVerifierTests.signed + 3_600
    private let nonce: [UInt8] = Array("request-nonce-1234".utf8)

    private struct PKI {
        let iaca: Certificate
        let signer: DocumentSigner
        let deviceKey: PrivateKey
        let recipient: PrivateKey

        init() throws {
            let iacaKey = try PrivateKey(generatingFor: .ES256)
            let from = AppleIdentityVerifierTests.signed - 86_400
            iaca = try AnnexB.makeIACA(key: iacaKey, country: "DE", organization: "Trustbed", commonName: "Test IACA",
                                       issuerAltName: .uri("https://pid.example"), crlURL: "https://pid.example/iaca.crl",
                                       validity: .init(notBefore: from, notAfter: from + 365 * 86_400))
            let signerKey = try PrivateKey(generatingFor: .ES256)
            let ds = try AnnexB.makeDocumentSigner(
                subjectKey: signerKey.publicKey, iaca: iaca, iacaKey: iacaKey, organization: "Trustbed", commonName: "Test DS",
                issuerAltName: .uri("https://pid.example"), crlURL: "https://pid.example/iaca.crl",
                validity: .init(notBefore: from, notAfter: from + 300 * 86_400))
            signer = try DocumentSigner(key: signerKey, certificateChain: [ds])
            deviceKey = try PrivateKey(generatingFor: .ES256)
            recipient = try PrivateKey(generatingECCurve: "P-256")
        }

        func pid() throws -> IssuerSigned {
            let signed = AppleIdentityVerifierTests.signed
            return try IssuerSigned.issue(
                docType: EUDIPID.docType,
                nameSpaces: [EUDIPID.nameSpace: [("family_name", "Mustermann"), ("given_name", "Erika"), ("age_over_18", true),
                                                 ("birth_date", .fullDate(CBORFullDate(year: 1984, month: 1, day: 26)!))]],
                deviceKey: COSEKey(publicKey: deviceKey.publicKey),
                validity: ValidityInfo(signed: signed, validFrom: signed, validUntil: signed + 90 * 86_400), signer: signer)
        }
    }

    /// What an iPhone sends, with hooks to spoil each part.
    private func envelope(
        _ pki: PKI, merchant: String = "merchant.example", algorithm: String = "APPLE-HPKE-v1", mode: UInt64 = 0,
        pkRHash: [UInt8]? = nil, deviceKey: PrivateKey? = nil, issuerSigned: IssuerSigned? = nil, docType: String? = nil,
        spoil: (inout AppleIdentityEnvelope) -> Void = { _ in }
    ) throws -> [UInt8] {
        let hash = pkRHash ?? Digest.sha256(pki.recipient.publicKey.uncompressedPoint!)
        let transcript = SessionTranscript.appleIdentityPresentment(nonce: nonce, merchantID: merchant, teamID: "TEAM123456", pkRHash: hash)
        var response = try DeviceResponse.present(
            try issuerSigned ?? pki.pid(), elements: [EUDIPID.nameSpace: ["family_name", "age_over_18", "birth_date"]],
            deviceKey: pki.deviceKey, sessionTranscript: transcript)
        if let deviceKey {
            let document = response.documents[0]
            let payload = transcript.deviceAuthenticationBytes(docType: document.docType, deviceNameSpacesBytes: document.deviceSigned.nameSpacesBytes)
            let forged = try COSESign1.sign(payload: payload, key: deviceKey, algorithm: .es256, detached: true)
            response = DeviceResponse(documents: [MDocDocument(docType: document.docType, issuerSigned: document.issuerSigned,
                                                               deviceSigned: DeviceSigned(signature: forged))])
        }
        if let docType {
            let document = response.documents[0]
            response = DeviceResponse(documents: [MDocDocument(docType: docType, issuerSigned: document.issuerSigned,
                                                               deviceSigned: document.deviceSigned)])
        }
        let plaintext = CBORValue.map([CBORMapEntry("identity", response.cborValue)]).encoded()
        let sealed = try HPKE.seal(plaintext, to: pki.recipient.publicKey, info: transcript.bytes)
        var envelope = AppleIdentityEnvelope(algorithm: algorithm, mode: mode, pkEm: sealed.enc, pkRHash: hash,
                                             infoHash: Digest.sha256(transcript.bytes), data: sealed.ciphertext)
        spoil(&envelope)
        return envelope.encoded()
    }

    private func verifier(_ pki: PKI, roots: [Certificate]? = nil) -> AppleIdentityVerifier {
        AppleIdentityVerifier(recipientKey: pki.recipient, merchantID: "merchant.example", teamID: "TEAM123456",
                              trustAnchors: roots ?? [pki.iaca])
    }

    private func failure(_ report: VerificationReport) -> (String, String)? {
        report.checks.first { !$0.ok }.map { ($0.name, $0.detail) }
    }

    func testValidEnvelopeVerifiesWithTheDisclosedClaims() throws {
        let pki = try PKI()
        let report = verifier(pki).verify(envelope: try envelope(pki), nonce: nonce, at: now)
        XCTAssertTrue(report.verified, "\(report.checks)")
        XCTAssertEqual(report.checks.map(\.name), [
            "envelope", "algorithm", "mode", "recipient_key", "info_hash", "hpke_open", "identity", "device_response",
            "issuer_certificate", "issuer_signature", "doc_type", "validity", "value_digests", "device_signature",
        ])
        XCTAssertTrue(report.checks[3].detail.contains("uncompressed point"))
        let claims = report.json.objectValue?["claims"]?.objectValue?[EUDIPID.docType]?.objectValue?[EUDIPID.nameSpace]?.objectValue
        XCTAssertEqual(claims?["family_name"], .string("Mustermann"))
        XCTAssertEqual(claims?["birth_date"], .string("1984-01-26"))
        XCTAssertEqual(claims?["age_over_18"], .bool(true))
        XCTAssertNil(claims?["given_name"], "not disclosed")
        XCTAssertEqual(report.json.objectValue?["state"], .string("verified"))
    }

    func testPkRHashOfTheSubjectPublicKeyInfoIsAcceptedAndNamed() throws {
        let pki = try PKI()
        let spkiHash = Digest.sha256(try pki.recipient.publicKey.derSubjectPublicKeyInfo())
        let report = verifier(pki).verify(envelope: try envelope(pki, pkRHash: spkiHash), nonce: nonce, at: now)
        XCTAssertTrue(report.verified, "\(report.checks)")
        XCTAssertTrue(report.checks.first { $0.name == "recipient_key" }!.detail.contains("SubjectPublicKeyInfo"))
    }

    func testEnvelopeMismatchesAreRefusedWithTheirReason() throws {
        let pki = try PKI()
        let v = verifier(pki)
        func refused(_ bytes: [UInt8], nonce: [UInt8]? = nil) -> (String, String)? {
            let report = v.verify(envelope: bytes, nonce: nonce ?? self.nonce, at: now)
            XCTAssertFalse(report.verified)
            XCTAssertEqual(report.json.objectValue?["claims"], .object([:]), "no claims from a refused envelope")
            return failure(report)
        }
        XCTAssertEqual(refused(try envelope(pki, algorithm: "APPLE-HPKE-v2"))?.0, "algorithm")
        XCTAssertEqual(refused(try envelope(pki, mode: 1))?.0, "mode")
        XCTAssertEqual(refused(try envelope(pki, pkRHash: Digest.sha256([1, 2, 3])))?.0, "recipient_key")
        XCTAssertEqual(refused(try envelope(pki, merchant: "merchant.other"))?.0, "info_hash")
        XCTAssertEqual(refused(try envelope(pki), nonce: Array("another nonce".utf8))?.0, "info_hash")
        XCTAssertEqual(refused(try envelope(pki) { $0 = AppleIdentityEnvelope(pkEm: $0.pkEm, pkRHash: $0.pkRHash,
                                                                             infoHash: Digest.sha256([0]), data: $0.data) })?.0, "info_hash")
        let tag = refused(try envelope(pki) { var data = $0.data; data[data.count - 1] ^= 1
            $0 = AppleIdentityEnvelope(pkEm: $0.pkEm, pkRHash: $0.pkRHash, infoHash: $0.infoHash, data: data) })
        XCTAssertEqual(tag?.0, "hpke_open")
        XCTAssertTrue(tag!.1.contains("tag"), tag!.1)
        let truncated = refused(try envelope(pki) { $0 = AppleIdentityEnvelope(pkEm: Array($0.pkEm.prefix(33)), pkRHash: $0.pkRHash,
                                                                               infoHash: $0.infoHash, data: $0.data) })
        XCTAssertEqual(truncated?.0, "hpke_open")
        XCTAssertTrue(truncated!.1.contains("pkEm"), truncated!.1)
        XCTAssertEqual(refused(Array("not an envelope".utf8))?.0, "envelope")
        XCTAssertEqual(refused([UInt8](repeating: 0x81, count: 50_000))?.0, "envelope")
        let incomplete: CBORValue = ["algorithm": "APPLE-HPKE-v1", "params": ["mode": 0], "data": .bytes([])]
        XCTAssertEqual(refused(incomplete.encoded())?.1,
                       "HPKEEnvelope.params.pkEm: missing")
    }

    func testInnerDeviceResponseMismatchesAreRefused() throws {
        let pki = try PKI()
        let stranger = try PKI()
        let untrusted = verifier(pki, roots: [stranger.iaca]).verify(envelope: try envelope(pki), nonce: nonce, at: now)
        XCTAssertEqual(failure(untrusted)?.0, "issuer_certificate")
        let device = verifier(pki).verify(envelope: try envelope(pki, deviceKey: try PrivateKey(generatingFor: .ES256)), nonce: nonce, at: now)
        XCTAssertEqual(failure(device)?.0, "device_signature")
        let docType = verifier(pki).verify(envelope: try envelope(pki, docType: "org.iso.18013.5.1.mDL"), nonce: nonce, at: now)
        XCTAssertEqual(failure(docType)?.0, "doc_type")

        // A changed element keeps its digestID but not its digest.
        let pid = try pki.pid()
        var items = pid.nameSpaces[EUDIPID.nameSpace]!
        let index = items.firstIndex { $0.item.elementIdentifier == "family_name" }!
        let original = items[index].item
        items[index] = IssuerSignedItemBytes(IssuerSignedItem(digestID: original.digestID, random: original.random,
                                                              elementIdentifier: "family_name", elementValue: "Musterfrau"))
        let tampered = IssuerSigned(nameSpaces: [EUDIPID.nameSpace: items], issuerAuth: pid.issuerAuth)
        let digest = verifier(pki).verify(envelope: try envelope(pki, issuerSigned: tampered), nonce: nonce, at: now)
        XCTAssertEqual(failure(digest)?.0, "value_digests")
    }
}
