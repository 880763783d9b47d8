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

    /// `init(item)` for an element whose value was encoded beforehand (`IssuerSignedElement`):
    /// the four-entry map is written around the value's bytes in the deterministic key order
    /// (RFC 8949 §4.2.1: bytewise order of the encoded keys, here their text heads 0x66, 0x68,
    /// 0x6c, 0x71), so an issuer does not build the map and encode every value again per mdoc
    /// (measured: see docs/performance.md).
    init(_ item: IssuerSignedItem, encodedElementValue: [UInt8]) {
        var out: [UInt8] = []
        out.reserveCapacity(encodedElementValue.count + item.random.count + item.elementIdentifier.utf8.count + 64)
        CBORValue.writeHead(5, 4, into: &out)
        func key(_ name: String) {
            CBORValue.writeHead(3, UInt64(name.utf8.count), into: &out)
            out += name.utf8
        }
        key("random")
        CBORValue.writeHead(2, UInt64(item.random.count), into: &out)
        out += item.random
        key("digestID")
        CBORValue.writeHead(0, item.digestID, into: &out)
        key("elementValue")
        out += encodedElementValue
        key("elementIdentifier")
        key(item.elementIdentifier)
        assert(out == item.cborValue.encoded(), "hand-written IssuerSignedItem differs from the encoder's")
        self.item = item
        self.encodedItem = out
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

/// A data element to issue with its value's deterministic encoding made once, for an issuer
/// that signs the same values many times (the PID Provider, per persona and day).
public struct IssuerSignedElement: Sendable {
    public let identifier: String
    public let value: CBORValue
    let encodedValue: [UInt8]

    public init(identifier: String, value: CBORValue) {
        self.identifier = identifier
        self.value = value
        encodedValue = value.encoded()
    }
}
