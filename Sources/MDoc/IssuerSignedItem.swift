import CBOR
import Cryptography

/// One data element as the issuer signed it (ISO/IEC 18013-5 §8.3.2.1.2.2):
///
///     IssuerSignedItem = { "digestID": uint, "random": bstr,
///                          "elementIdentifier": DataElementIdentifier, "elementValue": DataElementValue }
///
/// The random salt keeps a verifier from confirming a guessed value against the MSO digest of an
/// element that was not disclosed (§9.1.2.5).
public struct IssuerSignedItem: Equatable, Sendable {
    /// §9.1.2.5 asks for at least 16 bytes of salt per item.
    public static let minimumRandomLength = 16

    public let digestID: UInt64
    public let random: [UInt8]
    public let elementIdentifier: String
    public let elementValue: CBORValue

    public init(digestID: UInt64, random: [UInt8], elementIdentifier: String, elementValue: CBORValue) {
        self.digestID = digestID
        self.random = random
        self.elementIdentifier = elementIdentifier
        self.elementValue = elementValue
    }

    public var cborValue: CBORValue {
        ["digestID": .unsigned(digestID), "random": .bytes(random), "elementIdentifier": .text(elementIdentifier),
         "elementValue": elementValue]
    }

    init(_ field: CBORField) throws(CBORFieldError) {
        let map = try field.map()
        digestID = try map.required("digestID").uint()
        let randomField = try map.required("random")
        random = try randomField.bytes()
        guard random.count >= Self.minimumRandomLength else {
            throw randomField.error("must be at least \(Self.minimumRandomLength) bytes")
        }
        elementIdentifier = try map.required("elementIdentifier").text()
        elementValue = try map.required("elementValue").value
    }
}

/// `IssuerSignedItemBytes = #6.24(bstr .cbor IssuerSignedItem)`: an item together with the exact
/// encoded bytes the MSO digest covers. A received item keeps the bytes it came with, since
/// re-encoding it (for example with another key order) would change its digest.
public struct IssuerSignedItemBytes: Equatable, Sendable {
    public let item: IssuerSignedItem
    /// The content of the tag-24 byte string: the encoded IssuerSignedItem.
    public let encodedItem: [UInt8]

    /// Encodes `item` deterministically (RFC 8949 §4.2).
    public init(_ item: IssuerSignedItem) {
        self.item = item
        self.encodedItem = item.cborValue.encoded()
    }

    init(_ field: CBORField) throws(CBORFieldError) {
        let inner = try field.embedded()
        item = try IssuerSignedItem(inner)
        encodedItem = field.value.embeddedBytes ?? []
    }

    public var cborValue: CBORValue { .tagged(CBORValue.tagEncodedCBOR, .bytes(encodedItem)) }

    /// §9.1.2.5: the digest is taken over the whole tag-24 data item (tag head, byte string
    /// head and content), not over the inner IssuerSignedItem alone.
    public func digest(_ algorithm: MDocDigestAlgorithm) -> [UInt8] {
        algorithm.digest(cborValue.encoded())
    }

    /// `digest(.sha256)` with a context reused across the elements of one issuance. The
    /// tag-24 and byte-string heads are hashed before the item's bytes instead of encoding
    /// `cborValue` (a copy of every item, the portrait's kilobytes included).
    func digest(_ hasher: Digest.SHA256Context) -> [UInt8] {
        var head: [UInt8] = []
        head.reserveCapacity(11)
        CBORValue.writeHead(6, CBORValue.tagEncodedCBOR, into: &head)
        CBORValue.writeHead(2, UInt64(encodedItem.count), into: &head)
        return hasher.hash(head, encodedItem)
    }
}
