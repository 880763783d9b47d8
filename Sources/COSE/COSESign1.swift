import CBOR
import Cryptography

/// A COSE_Sign1 message (RFC 9052 §4.2): one signer, no recipients.
///
///     COSE_Sign1 = [ protected: bstr .cbor header_map / bstr .size 0,
///                    unprotected: header_map, payload: bstr / nil, signature: bstr ]
///
/// The protected header is kept as the exact bytes that were signed; re-encoding a received
/// header could change them and break the signature.
public struct COSESign1: Hashable, Sendable {
    /// CBOR tag of a tagged COSE_Sign1 (RFC 9052 §2).
    public static let tag: UInt64 = 18

    public let protectedBytes: [UInt8]
    public let protectedHeader: [CBORMapEntry]
    public let unprotectedHeader: [CBORMapEntry]
    /// nil when the payload is detached (carried elsewhere, RFC 9052 §2).
    public let payload: [UInt8]?
    public let signature: [UInt8]

    /// Signs `payload`. The protected header is `protectedHeader` with `alg` (label 1) forced to
    /// `algorithm`, so the two can never disagree; `x5chain` (RFC 9360: one bstr, or an array
    /// when there is more than one certificate) goes in the unprotected header, as ISO/IEC
    /// 18013-5 §9.1.2.4 places the issuer's certificate.
    public static func sign(
        payload: [UInt8], key: PrivateKey, algorithm: COSEAlgorithm,
        protectedHeader: [CBORMapEntry] = [], unprotectedHeader: [CBORMapEntry] = [],
        x5chain: [[UInt8]] = [], detached: Bool = false, externalAAD: [UInt8] = []
    ) throws(COSEError) -> COSESign1 {
        let protected = [CBORMapEntry(COSEHeaderLabel.algorithm, CBORValue(algorithm.rawValue))]
            + protectedHeader.filter { $0.key != COSEHeaderLabel.algorithm }
        var unprotected = unprotectedHeader
        if !x5chain.isEmpty {
            unprotected.removeAll { $0.key == COSEHeaderLabel.x5chain }
            let chain: CBORValue = x5chain.count == 1 ? .bytes(x5chain[0]) : .array(x5chain.map { .bytes($0) })
            unprotected.append(CBORMapEntry(COSEHeaderLabel.x5chain, chain))
        }
        for entry in unprotected where protected.contains(where: { $0.key == entry.key }) {
            throw .malformed("header parameter \(entry.key) in both buckets")
        }
        let protectedBytes = CBORValue.map(protected).encoded()
        let toBeSigned = signatureStructure(protectedBytes: protectedBytes, externalAAD: externalAAD, payload: payload)
        let signature: [UInt8]
        do { signature = try key.sign(toBeSigned, algorithm: algorithm.signatureAlgorithm) } catch { throw COSEError(error) }
        return COSESign1(protectedBytes: protectedBytes, protectedHeader: protected, unprotectedHeader: unprotected,
                         payload: detached ? nil : payload, signature: signature)
    }

    /// Sig_structure for a COSE_Sign1 (RFC 9052 §4.4), deterministically encoded:
    /// `["Signature1", body_protected, external_aad, payload]`.
    public static func signatureStructure(protectedBytes: [UInt8], externalAAD: [UInt8], payload: [UInt8]) -> [UInt8] {
        CBORValue.array(["Signature1", .bytes(protectedBytes), .bytes(externalAAD), .bytes(payload)]).encoded()
    }

    private init(protectedBytes: [UInt8], protectedHeader: [CBORMapEntry], unprotectedHeader: [CBORMapEntry],
                 payload: [UInt8]?, signature: [UInt8]) {
        self.protectedBytes = protectedBytes
        self.protectedHeader = protectedHeader
        self.unprotectedHeader = unprotectedHeader
        self.payload = payload
        self.signature = signature
    }
}

extension COSESign1 {
    /// Decodes a tagged (18) or untagged COSE_Sign1; any other tag is refused.
    public init(decoding bytes: [UInt8]) throws(COSEError) {
        let value: CBORValue
        do { value = try CBORValue.decode(bytes) } catch { throw .malformed("\(error)") }
        try self.init(value)
    }

    public init(_ value: CBORValue) throws(COSEError) {
        var value = value
        if case .tagged(let tag, let inner) = value {
            guard tag == Self.tag else { throw .malformed("tag \(tag) is not COSE_Sign1 (18)") }
            value = inner
        }
        guard let items = value.arrayValue, items.count == 4 else { throw .malformed("COSE_Sign1 must be an array of 4") }
        guard let protectedBytes = items[0].bytesValue else { throw .malformed("protected header must be a byte string") }
        let protectedHeader: [CBORMapEntry]
        if protectedBytes.isEmpty {
            protectedHeader = []
        } else {
            // RFC 9052 §3: a zero-length bstr or a bstr holding a map (possibly empty).
            let decoded: CBORValue
            do { decoded = try CBORValue.decode(protectedBytes) } catch { throw .malformed("protected header: \(error)") }
            guard let map = decoded.mapValue else { throw .malformed("protected header must be a map") }
            protectedHeader = map
        }
        guard let unprotectedHeader = items[1].mapValue else { throw .malformed("unprotected header must be a map") }
        for entry in protectedHeader + unprotectedHeader {
            switch entry.key {
            case .unsigned, .negative, .text: break
            default: throw .malformed("header label must be an integer or text")
            }
        }
        for entry in unprotectedHeader where protectedHeader.contains(where: { $0.key == entry.key }) {
            throw .malformed("header parameter \(entry.key) in both buckets")
        }
        let payload: [UInt8]?
        switch items[2] {
        case .bytes(let b): payload = b
        case .null: payload = nil
        default: throw .malformed("payload must be a byte string or nil")
        }
        guard let signature = items[3].bytesValue else { throw .malformed("signature must be a byte string") }
        self.init(protectedBytes: protectedBytes, protectedHeader: protectedHeader, unprotectedHeader: unprotectedHeader,
                  payload: payload, signature: signature)
    }

    /// ISO/IEC 18013-5 `IssuerAuth` is untagged; stand-alone COSE messages are usually tagged.
    public func cborValue(tagged: Bool) -> CBORValue {
        let array: CBORValue = [.bytes(protectedBytes), .map(unprotectedHeader), payload.map { .bytes($0) } ?? .null,
                                .bytes(signature)]
        return tagged ? .tagged(Self.tag, array) : array
    }

    public func encoded(tagged: Bool) -> [UInt8] { cborValue(tagged: tagged).encoded() }

    /// A header parameter, protected bucket first.
    public func header(_ label: CBORValue) -> CBORValue? {
        (protectedHeader.first { $0.key == label } ?? unprotectedHeader.first { $0.key == label })?.value
    }

    /// The certificates of `x5chain` (label 33), leaf first, DER; empty when absent.
    /// RFC 9360 §2 writes a single certificate as a bare bstr; an array of one is accepted too.
    public func x5chain() throws(COSEError) -> [[UInt8]] {
        guard let value = header(COSEHeaderLabel.x5chain) else { return [] }
        if let single = value.bytesValue { return [single] }
        guard let items = value.arrayValue, !items.isEmpty else { throw .malformed("x5chain must be a bstr or an array of bstr") }
        var out: [[UInt8]] = []
        for item in items {
            guard let der = item.bytesValue else { throw .malformed("x5chain must be a bstr or an array of bstr") }
            out.append(der)
        }
        return out
    }
}
