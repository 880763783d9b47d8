import CBOR
import COSE
import Cryptography
import JSON
import MDoc
@testable import Wallet
import XCTest

/// The wallet side of mdoc presentations: the mdoc PID found in the wallet file with its device
/// key, `--elements` selection, a DeviceResponse the MDoc verifier accepts, and Apple's envelope.
final class StoredMDocTests: XCTestCase {
    private let signed: Int64 = 1_710_000_000

    private func wallet(holder: HolderKey) throws -> (TestWalletFile, Certificate) {
        let iacaKey = try PrivateKey(generatingFor: .ES256)
        let iaca = try AnnexB.makeIACA(key: iacaKey, country: "DE", organization: "T", commonName: "IACA",
                                       issuerAltName: .uri("https://pid.example"), crlURL: "https://pid.example/crl",
                                       validity: .init(notBefore: signed - 86_400, notAfter: signed + 365 * 86_400))
        let dsKey = try PrivateKey(generatingFor: .ES256)
        let ds = try AnnexB.makeDocumentSigner(subjectKey: dsKey.publicKey, iaca: iaca, iacaKey: iacaKey, organization: "T",
                                               commonName: "DS", issuerAltName: .uri("https://pid.example"),
                                               crlURL: "https://pid.example/crl",
                                               validity: .init(notBefore: signed - 86_400, notAfter: signed + 300 * 86_400))
        let pid = try IssuerSigned.issue(
            docType: EUDIPID.docType, nameSpaces: [EUDIPID.nameSpace: [("family_name", "Mustermann"), ("given_name", "Erika")]],
            deviceKey: COSEKey(publicKey: holder.privateKey.publicKey),
            validity: ValidityInfo(signed: signed, validFrom: signed, validUntil: signed + 86_400 * 90),
            signer: DocumentSigner(key: dsKey, certificateChain: [ds]))
        var file = TestWalletFile(path: "/nonexistent/wallet.json")
        file.credentials = [
            ["format": "dc+sd-jwt", "credential": "a~b~", "holder_key": .object(try HolderKey().privateJWK())],
            ["format": "mso_mdoc", "credential": .string(pid.base64URL), "holder_key": .object(try holder.privateJWK())],
        ]
        return (file, iaca)
    }

    func testTheStoredPIDIsPresentedWithOnlyTheSelectedElements() throws {
        let holder = try HolderKey()
        let (file, iaca) = try wallet(holder: holder)
        let mdoc = try StoredMDoc.first(in: file)
        XCTAssertEqual(mdoc.docType, EUDIPID.docType)
        XCTAssertNil(mdoc.selection([]))
        XCTAssertEqual(mdoc.selection(["family_name", "other.ns/x,given_name"]),
                       [EUDIPID.nameSpace: ["family_name", "given_name"], "other.ns": ["x"]])
        let transcript = SessionTranscript.openID4VP(clientID: "x509_hash:abc", nonce: "n", jwkThumbprint: nil,
                                                     responseURI: "https://rp.example/response")
        let response = try mdoc.present(elements: mdoc.selection(["given_name"]), sessionTranscript: transcript)
        let result = DeviceResponseVerifier(trustAnchors: [iaca], expectedDocType: EUDIPID.docType)
            .verify(response.encoded(), sessionTranscript: transcript, at: signed + 60)
        XCTAssertTrue(result.verified, "\(result.checks)")
        XCTAssertEqual(result.documents.first?.elements[EUDIPID.nameSpace], ["given_name": "Erika"])
        XCTAssertThrowsError(try StoredMDoc.first(in: file, docType: "org.iso.18013.5.1.mDL"))
        XCTAssertThrowsError(try StoredMDoc.first(in: TestWalletFile(path: "/nonexistent/empty.json"))) {
            XCTAssertTrue("\($0)".contains("mso_mdoc"), "\($0)")
        }
    }

    /// The maker's envelope: `pkRHash` of the uncompressed point, `infoHash` of the Apple
    /// SessionTranscript, and HPKE that opens with the recipient's key and that transcript.
    func testAppleEnvelopeOpensWithTheRecipientKey() throws {
        let holder = try HolderKey()
        let (file, _) = try wallet(holder: holder)
        let recipient = try PrivateKey(generatingECCurve: "P-256")
        let nonce: [UInt8] = [1, 2, 3]
        let bytes = try AppleEnvelopeMaker.make(mdoc: try StoredMDoc.first(in: file), elements: nil, recipient: recipient.publicKey,
                                                nonce: nonce, merchantID: "m", teamID: "t")
        let envelope = try CBORValue.decode(bytes)
        XCTAssertEqual(envelope["algorithm"], "APPLE-HPKE-v1")
        let params = try XCTUnwrap(envelope["params"])
        XCTAssertEqual(params["mode"], 0)
        let pkRHash = Digest.sha256(recipient.publicKey.uncompressedPoint!)
        XCTAssertEqual(params["pkRHash"], .bytes(pkRHash))
        let transcript = SessionTranscript.appleIdentityPresentment(nonce: nonce, merchantID: "m", teamID: "t", pkRHash: pkRHash)
        XCTAssertEqual(params["infoHash"], .bytes(Digest.sha256(transcript.bytes)))
        let plaintext = try HPKE.open(envelope["data"]!.bytesValue!, enc: params["pkEm"]!.bytesValue!, recipient: recipient,
                                      info: transcript.bytes)
        XCTAssertNotNil(try CBORValue.decode(plaintext)["identity"]?["documents"])
        XCTAssertThrowsError(try AppleEnvelopeMaker.make(mdoc: try StoredMDoc.first(in: file), elements: nil,
                                                         recipient: try PrivateKey(generatingECCurve: "P-384").publicKey,
                                                         nonce: nonce, merchantID: "m", teamID: "t"))
    }
}
