import XCTest
import CBOR
import COSE
import Cryptography
import Support
@testable import MDoc

/// The shape of what we issue, read back from the raw CBOR rather than through our own types,
/// so each check names the ISO/IEC 18013-5 structure it guards.
final class IssuanceTests: XCTestCase {
    func testIssuerSignedStructureAndItems() throws {
        let fixture = try MDocFixture()
        let issued = try fixture.issuePID()
        let root = try CBORValue.decode(issued.encoded())
        XCTAssertEqual(root.mapValue?.map(\.key).compactMap(\.textValue).sorted(), ["issuerAuth", "nameSpaces"])
        let items = try XCTUnwrap(root["nameSpaces"]?[.text(EUDIPID.nameSpace)]?.arrayValue)
        XCTAssertEqual(items.count, MDocFixture.pidElements.count)
        var randoms = Set<[UInt8]>()
        var identifiers: [String] = []
        for tagged in items {
            XCTAssertEqual(tagged.taggedValue?.tag, 24, "IssuerSignedItemBytes must be tag 24")
            let item = try XCTUnwrap(tagged.embeddedValue())
            XCTAssertEqual(item.mapValue?.map(\.key).compactMap(\.textValue).sorted(),
                           ["digestID", "elementIdentifier", "elementValue", "random"])
            let random = try XCTUnwrap(item["random"]?.bytesValue)
            XCTAssertGreaterThanOrEqual(random.count, 16)
            randoms.insert(random)
            XCTAssertNotNil(item["digestID"]?.uintValue)
            identifiers.append(try XCTUnwrap(item["elementIdentifier"]?.textValue))
        }
        XCTAssertEqual(randoms.count, items.count, "every item needs its own salt")
        XCTAssertEqual(identifiers, MDocFixture.pidElements.map(\.identifier), "items keep the given order")
    }

    func testDigestIDsAreAUniquePermutationNotTheElementOrder() throws {
        let fixture = try MDocFixture()
        var identityOrders = 0
        for _ in 0..<5 {
            let items = try XCTUnwrap(fixture.issuePID().nameSpaces[EUDIPID.nameSpace])
            let ids = items.map(\.item.digestID)
            XCTAssertEqual(Set(ids).count, ids.count, "digestIDs must be unique within a nameSpace")
            XCTAssertEqual(ids.sorted(), Array(0..<UInt64(ids.count)))
            if ids == Array(0..<UInt64(ids.count)) { identityOrders += 1 }
        }
        // 12! orderings: five issuances all in element order would mean no shuffling.
        XCTAssertLessThan(identityOrders, 5)
    }

    func testBirthDateIsFullDateTag1004() throws {
        let issued = try MDocFixture().issuePID()
        let item = try XCTUnwrap(issued.nameSpaces[EUDIPID.nameSpace]?.first { $0.item.elementIdentifier == "birth_date" })
        // The raw bytes: d9 03ec = tag 1004, then "1984-01-26".
        let encodedValue = item.item.elementValue.encoded()
        XCTAssertEqual(Array(encodedValue.prefix(3)), [0xd9, 0x03, 0xec])
        XCTAssertEqual(try CBORValue.decode(item.encodedItem)["elementValue"]?.fullDateValue?.description, "1984-01-26")
    }

    func testMobileSecurityObjectShape() throws {
        let fixture = try MDocFixture()
        let issued = try fixture.issuePID()
        let payload = try XCTUnwrap(issued.issuerAuth.payload)
        let mso = try XCTUnwrap(CBORValue.decode(payload).embeddedValue(), "payload is #6.24(bstr .cbor MSO)")
        XCTAssertEqual(mso["version"], "1.0")
        XCTAssertEqual(mso["digestAlgorithm"], "SHA-256")
        XCTAssertEqual(mso["docType"], .text(EUDIPID.docType))
        XCTAssertEqual(mso["status"], ["status_list": ["idx": 42, "uri": .text(MDocFixture.statusURI)]])
        let deviceKey = try XCTUnwrap(mso["deviceKeyInfo"]?["deviceKey"])
        XCTAssertEqual(try COSEKey(deviceKey), try COSEKey(publicKey: fixture.deviceKey.publicKey))

        let validity = try XCTUnwrap(mso["validityInfo"])
        XCTAssertEqual(validity["signed"], .tagged(0, "2024-03-09T16:00:00Z"))
        for key in ["signed", "validFrom", "validUntil"] {
            guard case .tagged(0, .text(let text))? = validity[.text(key)] else { return XCTFail("\(key) is not a tag-0 tdate") }
            XCTAssertEqual(text.count, 20, "\(text): no fractional seconds, UTC Z")
            XCTAssertTrue(text.hasSuffix("Z"))
        }

        // Every item's digest is SHA-256 over its tag-24 bytes as they appear in nameSpaces.
        let digests = try XCTUnwrap(mso["valueDigests"]?[.text(EUDIPID.nameSpace)])
        let items = try XCTUnwrap(CBORValue.decode(issued.encoded())["nameSpaces"]?[.text(EUDIPID.nameSpace)]?.arrayValue)
        XCTAssertEqual(digests.mapValue?.count, items.count)
        for tagged in items {
            let id = try XCTUnwrap(tagged.embeddedValue()?["digestID"])
            XCTAssertEqual(digests[id]?.bytesValue, Digest.sha256(tagged.encoded()))
        }
    }

    func testIssuerAuthHeaders() throws {
        let fixture = try MDocFixture()
        let issuerAuth = try CBORValue.decode(fixture.issuePID().encoded())["issuerAuth"]
        let array = try XCTUnwrap(issuerAuth?.arrayValue, "IssuerAuth is an untagged COSE_Sign1")
        XCTAssertEqual(array.count, 4)
        XCTAssertEqual(try CBORValue.decode(XCTUnwrap(array[0].bytesValue)), [1: -7], "alg ES256, protected")
        XCTAssertEqual(array[1][33], .bytes(fixture.documentSigner.der), "x5chain: the DS certificate alone")
        XCTAssertEqual(array[3].bytesValue?.count, 64)
    }

    func testStatusIsOptionalAndBase64URLRoundTrips() throws {
        let issued = try MDocFixture().issuePID(status: nil)
        XCTAssertNil(try CBORValue.decode(XCTUnwrap(issued.issuerAuth.payload)).embeddedValue()?["status"])
        XCTAssertFalse(issued.base64URL.contains("="))
        XCTAssertEqual(Base64URL.decode(issued.base64URL), issued.encoded())
        XCTAssertEqual(try IssuerSigned(base64URL: issued.base64URL), issued)
    }

    func testInvalidInputIsRefused() throws {
        let fixture = try MDocFixture()
        let deviceKey = try COSEKey(publicKey: fixture.deviceKey.publicKey)
        let signer = try fixture.signer()
        func issue(_ elements: [(identifier: String, value: CBORValue)], validity: ValidityInfo? = nil,
                   randomLength: Int = 32) throws -> IssuerSigned {
            try IssuerSigned.issue(docType: EUDIPID.docType, nameSpaces: [EUDIPID.nameSpace: elements], deviceKey: deviceKey,
                                   validity: validity ?? fixture.validity, signer: signer, randomLength: randomLength)
        }
        assertMDocError(.invalidInput("duplicate element given_name in \(EUDIPID.nameSpace)"),
                        try issue([("given_name", "A"), ("given_name", "B")]))
        assertMDocError(.invalidInput("no data elements"), try issue([]))
        assertMDocError(.invalidInput("random must be at least 16 bytes"), try issue([("a", 1)], randomLength: 8))
        let s = MDocFixture.signed
        assertMDocError(.invalidInput("validFrom is before signed"),
                        try issue([("a", 1)], validity: ValidityInfo(signed: s, validFrom: s - 1, validUntil: s + 10)))
        assertMDocError(.invalidInput("validUntil is not after validFrom"),
                        try issue([("a", 1)], validity: ValidityInfo(signed: s, validFrom: s, validUntil: s)))
        let late = s + 500 * 86_400
        assertMDocError(.invalidInput("signed lies outside the document signer certificate's validity"),
                        try issue([("a", 1)], validity: ValidityInfo(signed: late, validFrom: late, validUntil: late + 10)))
        let otherKey = try PrivateKey(generatingFor: .ES256)
        assertMDocError(.invalidInput("key does not match the document signer certificate"),
                        try DocumentSigner(key: otherKey, certificateChain: [fixture.documentSigner]))
        assertMDocError(.invalidInput("key does not fit es384"),
                        try DocumentSigner(key: fixture.signerKey, certificateChain: [fixture.documentSigner], algorithm: .es384))
    }

    /// The reused-context digest hashes the tag-24 and byte-string heads apart from the item:
    /// it must equal the digest of the whole tag-24 encoding for every byte-string head width.
    func testReusedContextDigestCoversTheTag24Heads() {
        let hasher = Digest.SHA256Context()
        for valueLength in [0, 10, 200, 70_000] {
            let item = IssuerSignedItemBytes(IssuerSignedItem(
                digestID: 7, random: Array(repeating: 0x5a, count: 16), elementIdentifier: "portrait",
                elementValue: .bytes(Array(repeating: 0xff, count: valueLength))))
            XCTAssertEqual(item.digest(hasher), item.digest(.sha256), "\(valueLength)-byte value")
            XCTAssertEqual(item.digest(hasher), Digest.sha256(item.cborValue.encoded()))
        }
    }

    /// The item map written around a pre-encoded value is the encoder's own deterministic
    /// encoding, for every head width of digestID, random, identifier and value.
    func testPreEncodedElementValueGivesTheEncodersBytes() {
        let values: [CBORValue] = [
            "Mustermann", .bytes(Array(repeating: 7, count: 300)), .fullDate(CBORFullDate("1984-01-26")!), ["DE", "NL"],
            ["locality": "Berlin", "postal_code": "10115"], .bool(true), 18, .null, .text(String(repeating: "x", count: 70_000)),
        ]
        for (n, value) in values.enumerated() {
            for digestID: UInt64 in [0, 23, 24, 300, 70_000] {
                let identifier = n.isMultiple(of: 2) ? "family_name" : "a_rather_long_element_identifier_over_24_bytes"
                let item = IssuerSignedItem(digestID: digestID, random: Array(repeating: UInt8(n), count: 16 + n * 3),
                                            elementIdentifier: identifier, elementValue: value)
                let element = IssuerSignedElement(identifier: identifier, value: value)
                XCTAssertEqual(IssuerSignedItemBytes(item, encodedElementValue: element.encodedValue).encodedItem,
                               IssuerSignedItemBytes(item).encodedItem, "value \(n), digestID \(digestID)")
            }
        }
    }
}
