import XCTest
import CBOR
import COSE
import Cryptography
@testable import MDoc

final class VerificationTests: XCTestCase {
    static let now = MDocFixture.signed + 3600

    func testRoundTripWithChainToIACA() throws {
        let fixture = try MDocFixture()
        let issued = try fixture.issuePID()
        let received = try IssuerSigned(base64URL: issued.base64URL)
        let verified = try received.verify(at: Self.now, trustAnchors: [fixture.iaca], expectedDocType: EUDIPID.docType)
        XCTAssertEqual(verified.docType, EUDIPID.docType)
        XCTAssertEqual(verified.validityInfo, fixture.validity)
        XCTAssertEqual(verified.deviceKey, try COSEKey(publicKey: fixture.deviceKey.publicKey))
        XCTAssertEqual(verified.status, StatusListReference(index: 42, uri: MDocFixture.statusURI))
        XCTAssertEqual(verified.documentSignerChain, [fixture.documentSigner])
        let pid = try XCTUnwrap(verified.elements[EUDIPID.nameSpace])
        XCTAssertEqual(pid.count, MDocFixture.pidElements.count)
        for (identifier, value) in MDocFixture.pidElements { XCTAssertEqual(pid[identifier], value, identifier) }
        XCTAssertEqual(pid["birth_date"]?.fullDateValue, CBORFullDate(year: 1984, month: 1, day: 26))
    }

    func testUntrustedOrExpiredDocumentSignerIsRefused() throws {
        let fixture = try MDocFixture()
        let issued = try fixture.issuePID()
        let other = try MDocFixture()
        XCTAssertThrowsError(try issued.verify(at: Self.now, trustAnchors: [other.iaca])) { error in
            guard case .untrustedDocumentSigner? = error as? MDocError else { return XCTFail("\(error)") }
        }
        // The IACA itself is not a document signer (no EKU), even if it were in x5chain.
        let iacaSigned = try IssuerSigned.issue(
            docType: EUDIPID.docType, nameSpaces: ["ns": [("a", 1)]], deviceKey: COSEKey(publicKey: fixture.deviceKey.publicKey),
            validity: fixture.validity, signer: DocumentSigner(key: fixture.iacaKey, certificateChain: [fixture.iaca]))
        XCTAssertThrowsError(try iacaSigned.verify(at: Self.now, trustAnchors: [fixture.iaca])) { error in
            guard case .untrustedDocumentSigner? = error as? MDocError else { return XCTFail("\(error)") }
        }
        XCTAssertNoThrow(try iacaSigned.verify(at: Self.now, trustAnchors: nil))
    }

    func testValidityWindowAndDocType() throws {
        let fixture = try MDocFixture()
        let issued = try fixture.issuePID()
        assertMDocError(.notYetValid(validFrom: MDocFixture.signed), try issued.verify(at: MDocFixture.signed - 1, trustAnchors: nil))
        assertMDocError(.expired(validUntil: MDocFixture.validUntil),
                        try issued.verify(at: MDocFixture.validUntil + 1, trustAnchors: nil))
        XCTAssertNoThrow(try issued.verify(at: MDocFixture.validUntil, trustAnchors: nil))
        assertMDocError(.docTypeMismatch(expected: "org.iso.18013.5.1.mDL", found: EUDIPID.docType),
                        try issued.verify(at: Self.now, trustAnchors: nil, expectedDocType: "org.iso.18013.5.1.mDL"))
        assertMDocError(.signature(.unsupportedAlgorithm("-7")),
                        try issued.verify(at: Self.now, trustAnchors: nil, algorithms: [.es384]))
    }

    func testSelectiveDisclosureStillVerifies() throws {
        let issued = try MDocFixture().issuePID()
        let kept = issued.nameSpaces[EUDIPID.nameSpace]!.filter { ["age_over_18", "issuing_country"].contains($0.item.elementIdentifier) }
        let presented = IssuerSigned(nameSpaces: [EUDIPID.nameSpace: kept], issuerAuth: issued.issuerAuth)
        let verified = try IssuerSigned(decoding: presented.encoded()).verify(at: Self.now, trustAnchors: nil)
        XCTAssertEqual(verified.elements[EUDIPID.nameSpace], ["age_over_18": true, "issuing_country": "DE"])
    }

    // MARK: tampering

    private func tampered(_ issued: IssuerSigned, _ change: (inout [IssuerSignedItem]) -> Void) -> IssuerSigned {
        var items = issued.nameSpaces[EUDIPID.nameSpace]!.map(\.item)
        change(&items)
        return IssuerSigned(nameSpaces: [EUDIPID.nameSpace: items.map(IssuerSignedItemBytes.init)], issuerAuth: issued.issuerAuth)
    }

    private func replace(_ item: IssuerSignedItem, digestID: UInt64? = nil, random: [UInt8]? = nil,
                         value: CBORValue? = nil) -> IssuerSignedItem {
        IssuerSignedItem(digestID: digestID ?? item.digestID, random: random ?? item.random,
                         elementIdentifier: item.elementIdentifier, elementValue: value ?? item.elementValue)
    }

    func testTamperedValueRandomOrDigestIDFails() throws {
        let issued = try MDocFixture().issuePID()
        XCTAssertNoThrow(try tampered(issued) { _ in }.verify(at: Self.now, trustAnchors: nil), "re-encoding alone changes nothing")
        let first = issued.nameSpaces[EUDIPID.nameSpace]![0].item
        let second = issued.nameSpaces[EUDIPID.nameSpace]![1].item

        let value = tampered(issued) { $0[0] = replace($0[0], value: "Musterfrau") }
        assertMDocError(.digestMismatch(nameSpace: EUDIPID.nameSpace, digestID: first.digestID),
                        try value.verify(at: Self.now, trustAnchors: nil))

        var random = first.random
        random[0] ^= 1
        let salted = tampered(issued) { $0[0] = replace($0[0], random: random) }
        assertMDocError(.digestMismatch(nameSpace: EUDIPID.nameSpace, digestID: first.digestID),
                        try salted.verify(at: Self.now, trustAnchors: nil))

        // Swapping digestIDs points each item at the other's digest.
        let swapped = tampered(issued) {
            $0[0] = replace($0[0], digestID: second.digestID)
            $0[1] = replace($0[1], digestID: first.digestID)
        }
        XCTAssertThrowsError(try swapped.verify(at: Self.now, trustAnchors: nil)) { error in
            guard case .digestMismatch? = error as? MDocError else { return XCTFail("\(error)") }
        }

        let unknown = tampered(issued) { $0.append(IssuerSignedItem(digestID: 999, random: random, elementIdentifier: "x", elementValue: 1)) }
        assertMDocError(.missingDigest(nameSpace: EUDIPID.nameSpace, digestID: 999), try unknown.verify(at: Self.now, trustAnchors: nil))

        let duplicate = tampered(issued) { $0.append($0[0]) }
        assertMDocError(.malformed("duplicate digestID \(first.digestID) in \(EUDIPID.nameSpace)"),
                        try duplicate.verify(at: Self.now, trustAnchors: nil))
    }

    /// A byte changed inside an item on the wire: the verifier hashes the bytes it received.
    func testTamperedBytesOnTheWireFail() throws {
        let issued = try MDocFixture().issuePID()
        var bytes = issued.encoded()
        let needle = Array("Mustermann".utf8)
        let at = try XCTUnwrap((0...(bytes.count - needle.count)).first { Array(bytes[$0..<$0 + needle.count]) == needle })
        bytes[at] = UInt8(ascii: "N")
        let received = try IssuerSigned(decoding: bytes)
        XCTAssertThrowsError(try received.verify(at: Self.now, trustAnchors: nil)) { error in
            guard case .digestMismatch? = error as? MDocError else { return XCTFail("\(error)") }
        }
    }

    func testTamperedSignatureOrPayloadFails() throws {
        let issued = try MDocFixture().issuePID()
        var array = issued.issuerAuth.cborValue(tagged: false).arrayValue!
        var signature = array[3].bytesValue!
        signature[10] ^= 0x40
        array[3] = .bytes(signature)
        let badSignature = IssuerSigned(nameSpaces: issued.nameSpaces, issuerAuth: try COSESign1(.array(array)))
        assertMDocError(.signature(.invalidSignature), try badSignature.verify(at: Self.now, trustAnchors: nil))

        // A forged MSO (validity stretched by a year) under the original signature.
        var mso = try issued.unverifiedMobileSecurityObject()
        mso.validityInfo.validUntil += 365 * 86_400
        array = issued.issuerAuth.cborValue(tagged: false).arrayValue!
        array[2] = .bytes(CBORValue.embedded(mso.cborValue).encoded())
        let forged = IssuerSigned(nameSpaces: issued.nameSpaces, issuerAuth: try COSESign1(.array(array)))
        assertMDocError(.signature(.invalidSignature), try forged.verify(at: Self.now, trustAnchors: nil))
    }

    // MARK: decoding

    func testMobileSecurityObjectRoundTrip() throws {
        let mso = try MDocFixture().issuePID().unverifiedMobileSecurityObject()
        let again = try MobileSecurityObject(CBORField(mso.cborValue))
        XCTAssertEqual(again, mso)
        XCTAssertEqual(mso.digestAlgorithm, .sha256)
        XCTAssertEqual(mso.valueDigests[EUDIPID.nameSpace]?.count, MDocFixture.pidElements.count)
    }

    func testMalformedInputIsNamedByPath() throws {
        let issued = try MDocFixture().issuePID()
        assertMDocError(.malformed("IssuerSigned.issuerAuth: missing"), try IssuerSigned([:]))
        assertMDocError(.malformed("IssuerSigned.nameSpaces.ns[0].digestID: missing"),
                        try IssuerSigned(["nameSpaces": ["ns": [.embedded([:])]]]))
        assertMDocError(.malformed("IssuerSigned.nameSpaces.ns[0]: expected an embedded CBOR item (tag 24 byte string), got map"),
                        try IssuerSigned(["nameSpaces": ["ns": [["digestID": 1]]], "issuerAuth": issued.issuerAuth.cborValue(tagged: false)]))
        let shortSalt = IssuerSignedItem(digestID: 0, random: [1, 2, 3], elementIdentifier: "a", elementValue: 1)
        assertMDocError(.malformed("IssuerSigned.nameSpaces.ns[0].random: must be at least 16 bytes"),
                        try IssuerSigned(["nameSpaces": ["ns": [IssuerSignedItemBytes(shortSalt).cborValue]],
                                          "issuerAuth": issued.issuerAuth.cborValue(tagged: false)]))
        assertMDocError(.malformed("not base64url"), try IssuerSigned(base64URL: "!!"))

        var mso = try issued.unverifiedMobileSecurityObject().cborValue
        mso = .map(mso.mapValue!.map { $0.key == "digestAlgorithm" ? CBORMapEntry($0.key, "MD5") : $0 })
        assertMDocError(.unsupportedDigestAlgorithm("MD5"), try MobileSecurityObject(CBORField(mso)))
    }

    /// Item bytes that are valid but not deterministically encoded (keys out of order) are kept
    /// as received: re-encoding them would change the digest the issuer signed.
    func testReceivedItemBytesAreKeptExactly() throws {
        let pairs: [(CBORValue, CBORValue)] = [("elementIdentifier", "age_over_18"), ("elementValue", true), ("digestID", 3),
                                               ("random", .bytes([UInt8](repeating: 7, count: 16)))]
        let inner: [UInt8] = [0xa4] + pairs.flatMap { pair -> [UInt8] in pair.0.encoded() + pair.1.encoded() }
        XCTAssertNotEqual(inner, try CBORValue.decode(inner).encoded(), "the sample must not be canonical")
        let item = try IssuerSignedItemBytes(CBORField(.tagged(24, .bytes(inner))))
        XCTAssertEqual(item.encodedItem, inner)
        XCTAssertEqual(item.item.digestID, 3)
        XCTAssertEqual(item.digest(.sha256), Digest.sha256(CBORValue.tagged(24, .bytes(inner)).encoded()))
    }
}
