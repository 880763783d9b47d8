import CBOR
import COSE
import Cryptography
import Foundation
import MDoc
import XCTest

/// DeviceResponse decoding, issuer and device authentication (ISO/IEC 18013-5 §8.3.2.1.2.2,
/// §9.1.2, §9.1.3) with the OpenID4VP SessionTranscript (OpenID4VP 1.0 Appendix B.2.6.1).
final class DeviceResponseTests: XCTestCase {
    private let transcript = SessionTranscript.openID4VP(
        clientID: "x509_san_dns:rp.example", nonce: "n-0S6_WzA2Mj", jwkThumbprint: nil, responseURI: "https://rp.example/response")
    private let now = MDocFixture.signed + 3_600

    private func failed(_ result: DeviceResponseVerification) -> [String: String] {
        Dictionary(result.checks.filter { !$0.ok }.map { ($0.name, $0.detail) }, uniquingKeysWith: { a, _ in a })
    }

    /// OpenID4VP 1.0 Appendix B.2.6.1's example: the SessionTranscript bytes of the specification.
    func testOpenID4VPSessionTranscriptMatchesTheSpecificationExample() {
        let thumbprint = hexBytes("4283ec927ae0f208daaa2d026a814f2b22dca52cf85ffa8f3f8626c6bd669047")
        let transcript = SessionTranscript.openID4VP(
            clientID: "x509_san_dns:example.com", nonce: "exc7gBkxjx1rdc9udRrveKvSsJIq80avlXeLHhGwqtA",
            jwkThumbprint: thumbprint, responseURI: "https://example.com/response")
        XCTAssertEqual(hex(transcript.bytes),
                       "83f6f682714f70656e494434565048616e646f7665725820048bc053c00442af9b8eed494cefdd9d95240d254b046b11b68013722aad38ac")
    }

    func testPresentedResponseVerifies() throws {
        let fixture = try MDocFixture()
        let response = try DeviceResponse.present(
            try fixture.issuePID(), elements: [EUDIPID.nameSpace: ["family_name", "age_over_18"]],
            deviceKey: fixture.deviceKey, sessionTranscript: transcript)
        let bytes = response.encoded()
        let verifier = DeviceResponseVerifier(trustAnchors: [fixture.iaca], expectedDocType: EUDIPID.docType)
        let result = verifier.verify(bytes, sessionTranscript: transcript, at: now)
        XCTAssertTrue(result.verified, "\(result.checks)")
        XCTAssertEqual(result.checks.map(\.name), ["device_response", "issuer_certificate", "issuer_signature", "doc_type",
                                                   "validity", "value_digests", "device_signature"])
        XCTAssertEqual(result.documents.first?.elements[EUDIPID.nameSpace],
                       ["family_name": "Mustermann", "age_over_18": true], "only the selected elements")
        // The same response for another verifier's transcript fails the device signature only.
        let other = SessionTranscript.openID4VP(clientID: "x509_san_dns:evil.example", nonce: "n-0S6_WzA2Mj",
                                                jwkThumbprint: nil, responseURI: "https://rp.example/response")
        let replayed = verifier.verify(bytes, sessionTranscript: other, at: now)
        XCTAssertEqual(Array(failed(replayed).keys), ["device_signature"])
        XCTAssertTrue(replayed.documents.isEmpty)
    }

    /// With a `ValidatedChainCache` the document signer's chain is validated once: the second
    /// response is verified with the same checks and details from the cached path, a device
    /// signature over another transcript still fails, another root set is validated (and
    /// refused) afresh, and past the chain's validity the cache does not vouch for it.
    func testValidatedChainCacheGivesTheSameVerdicts() throws {
        let fixture = try MDocFixture()
        let pid = try fixture.issuePID()
        let bytes = try DeviceResponse.present(pid, elements: [EUDIPID.nameSpace: ["family_name"]], deviceKey: fixture.deviceKey,
                                               sessionTranscript: transcript).encoded()
        let plain = DeviceResponseVerifier(trustAnchors: [fixture.iaca], expectedDocType: EUDIPID.docType)
        var cached = plain
        cached.chains = ValidatedChainCache()
        let reference = plain.verify(bytes, sessionTranscript: transcript, at: now)
        let first = cached.verify(bytes, sessionTranscript: transcript, at: now)
        let second = cached.verify(bytes, sessionTranscript: transcript, at: now + 1)
        XCTAssertEqual(cached.chains?.count, 1)
        XCTAssertTrue(second.verified, "\(second.checks)")
        XCTAssertEqual(first.checks, reference.checks)
        XCTAssertEqual(second.checks.map(\.name), reference.checks.map(\.name))
        XCTAssertEqual(second.checks.first { $0.name == "issuer_certificate" }, reference.checks.first { $0.name == "issuer_certificate" })
        XCTAssertEqual(second.documents.first?.documentSignerChain.map(\.der), reference.documents.first?.documentSignerChain.map(\.der))
        let other = SessionTranscript.openID4VP(clientID: "x509_san_dns:evil.example", nonce: "n-0S6_WzA2Mj",
                                                jwkThumbprint: nil, responseURI: "https://rp.example/response")
        XCTAssertEqual(Array(failed(cached.verify(bytes, sessionTranscript: other, at: now)).keys), ["device_signature"])
        var stranger = cached
        stranger.trustAnchors = [try MDocFixture().iaca]
        XCTAssertEqual(Array(failed(stranger.verify(bytes, sessionTranscript: transcript, at: now)).keys), ["issuer_certificate"])
        XCTAssertEqual(cached.chains?.count, 1, "a refused chain is not cached")
        let late = cached.verify(bytes, sessionTranscript: transcript, at: MDocFixture.validUntil + 400 * 86_400)
        XCTAssertNotNil(failed(late)["issuer_certificate"], "past the chain's validity it is validated again, and refused")
    }

    func testPresentRefusesAForeignKeyAndMissingElements() throws {
        let fixture = try MDocFixture()
        let pid = try fixture.issuePID()
        XCTAssertThrowsError(try DeviceResponse.present(pid, elements: nil, deviceKey: try PrivateKey(generatingFor: .ES256),
                                                        sessionTranscript: transcript))
        XCTAssertThrowsError(try DeviceResponse.present(pid, elements: [EUDIPID.nameSpace: ["shoe_size"]],
                                                        deviceKey: fixture.deviceKey, sessionTranscript: transcript)) {
            XCTAssertTrue("\($0)".contains("shoe_size"), "\($0)")
        }
    }

    func testUntrustedRootWrongDocTypeAndExpiry() throws {
        let fixture = try MDocFixture()
        let bytes = try DeviceResponse.present(try fixture.issuePID(), elements: nil, deviceKey: fixture.deviceKey,
                                               sessionTranscript: transcript).encoded()
        let stranger = try MDocFixture()
        let untrusted = DeviceResponseVerifier(trustAnchors: [stranger.iaca]).verify(bytes, sessionTranscript: transcript, at: now)
        XCTAssertEqual(Array(failed(untrusted).keys), ["issuer_certificate"])
        let none = DeviceResponseVerifier(trustAnchors: []).verify(bytes, sessionTranscript: transcript, at: now)
        XCTAssertEqual(failed(none)["issuer_certificate"], "no trusted IACA root is configured")
        let mdl = DeviceResponseVerifier(trustAnchors: [fixture.iaca], expectedDocType: "org.iso.18013.5.1.mDL")
            .verify(bytes, sessionTranscript: transcript, at: now)
        XCTAssertEqual(Array(failed(mdl).keys), ["doc_type"])
        let late = DeviceResponseVerifier(trustAnchors: [fixture.iaca]).verify(bytes, sessionTranscript: transcript,
                                                                                 at: MDocFixture.validUntil + 1)
        XCTAssertNotNil(failed(late)["validity"])
    }

    /// A changed element value, a document's docType that differs from its MSO's, and a device
    /// signature by another key are each refused by their own check.
    func testTamperedDigestDocTypeAndDeviceSignature() throws {
        let fixture = try MDocFixture()
        let response = try DeviceResponse.present(try fixture.issuePID(), elements: nil, deviceKey: fixture.deviceKey,
                                                  sessionTranscript: transcript)
        let verifier = DeviceResponseVerifier(trustAnchors: [fixture.iaca])
        let document = response.documents[0]

        // An item re-encoded with another value keeps its digestID but not its digest.
        var items = document.issuerSigned.nameSpaces[EUDIPID.nameSpace]!
        let original = items[0].item
        items[0] = IssuerSignedItemBytes(IssuerSignedItem(digestID: original.digestID, random: original.random,
                                                          elementIdentifier: original.elementIdentifier, elementValue: "Tampered"))
        let tampered = DeviceResponse(documents: [MDocDocument(
            docType: document.docType, issuerSigned: IssuerSigned(nameSpaces: [EUDIPID.nameSpace: items], issuerAuth: document.issuerSigned.issuerAuth),
            deviceSigned: document.deviceSigned)])
        let digest = verifier.verify(tampered.encoded(), sessionTranscript: transcript, at: now)
        XCTAssertEqual(Array(failed(digest).keys), ["value_digests"])
        XCTAssertTrue(failed(digest)["value_digests"]!.contains("does not match"))

        let renamed = DeviceResponse(documents: [MDocDocument(docType: "org.iso.18013.5.1.mDL", issuerSigned: document.issuerSigned,
                                                              deviceSigned: document.deviceSigned)])
        let docType = verifier.verify(renamed.encoded(), sessionTranscript: transcript, at: now)
        XCTAssertNotNil(failed(docType)["doc_type"])
        XCTAssertNotNil(failed(docType)["device_signature"], "DeviceAuthentication names the docType too")

        let thief = try PrivateKey(generatingFor: .ES256)
        let payload = transcript.deviceAuthenticationBytes(docType: document.docType, deviceNameSpacesBytes: document.deviceSigned.nameSpacesBytes)
        let forged = try COSESign1.sign(payload: payload, key: thief, algorithm: .es256, detached: true)
        let stolen = DeviceResponse(documents: [MDocDocument(docType: document.docType, issuerSigned: document.issuerSigned,
                                                             deviceSigned: DeviceSigned(signature: forged))])
        let device = verifier.verify(stolen.encoded(), sessionTranscript: transcript, at: now)
        XCTAssertEqual(Array(failed(device).keys), ["device_signature"])
    }

    func testResponseLevelRefusals() throws {
        let fixture = try MDocFixture()
        let response = try DeviceResponse.present(try fixture.issuePID(), elements: nil, deviceKey: fixture.deviceKey,
                                                  sessionTranscript: transcript)
        let verifier = DeviceResponseVerifier(trustAnchors: [fixture.iaca])
        let two = DeviceResponse(documents: response.documents + response.documents)
        XCTAssertEqual(failed(verifier.verify(two.encoded(), sessionTranscript: transcript, at: now))["device_response"],
                       "2 documents where exactly one is expected")
        let status = DeviceResponse(documents: response.documents, status: 10)
        XCTAssertTrue(failed(verifier.verify(status.encoded(), sessionTranscript: transcript, at: now))["device_response"]!
            .contains("status 10"))
        let version = DeviceResponse(version: "2.0", documents: response.documents)
        XCTAssertNotNil(failed(verifier.verify(version.encoded(), sessionTranscript: transcript, at: now))["device_response"])
        let empty = DeviceResponse(documents: [], documentErrors: [EUDIPID.docType: 0])
        XCTAssertNotNil(failed(verifier.verify(empty.encoded(), sessionTranscript: transcript, at: now))["device_response"])
    }

    /// CBOR bombs: deep nesting, a length far beyond the input, truncation and trailing bytes
    /// are one failed `device_response` check each, never a crash.
    func testCBORBombsAreRefused() throws {
        let verifier = DeviceResponseVerifier(trustAnchors: [])
        let deep = [UInt8](repeating: 0x81, count: 100_000) + [0x00]
        let huge: [UInt8] = [0xa1, 0x67] + Array("version".utf8) + [0x5b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        let hugeArray: [UInt8] = [0x9b, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00]
        let indefinite = [UInt8](repeating: 0x9f, count: 10_000)
        for bomb in [deep, huge, hugeArray, indefinite, [], [0xa0], Array("not cbor".utf8)] {
            let result = verifier.verify(bomb, sessionTranscript: transcript, at: now)
            XCTAssertFalse(result.verified)
            XCTAssertEqual(result.checks.map(\.name), ["device_response"])
        }
    }

    /// ISO/IEC 18013-5 Annex D.4.1.2's DeviceResponse (Tests/Fixtures): decoded, its MSO
    /// signature and all digests verify; its "utopia iaca" root is not trusted here, and its
    /// deviceMac is refused as unsupported.
    func testISO18013AnnexDDeviceResponse() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/iso18013-5-annex-d-device-response.hex")
        let bytes = hexBytes(try String(contentsOf: url, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))
        let response = try DeviceResponse(decoding: bytes)
        XCTAssertEqual(response.documents.first?.docType, "org.iso.18013.5.1.mDL")
        let signed: Int64 = 1_601_559_002  // 2020-10-01T13:30:02Z, the MSO's validFrom
        let result = DeviceResponseVerifier(trustAnchors: [try MDocFixture().iaca], expectedDocType: "org.iso.18013.5.1.mDL")
            .verify(bytes, sessionTranscript: transcript, at: signed + 60)
        let outcomes = Dictionary(uniqueKeysWithValues: result.checks.map { ($0.name, $0.ok) })
        XCTAssertEqual(outcomes, ["device_response": true, "issuer_certificate": false, "issuer_signature": true, "doc_type": true,
                                  "validity": true, "value_digests": true, "device_signature": false], "\(result.checks)")
        XCTAssertTrue(failed(result)["device_signature"]!.contains("deviceMac"))
    }
}

func hexBytes(_ hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        out.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    return out
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
