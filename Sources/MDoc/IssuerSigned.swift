import CBOR
import COSE
import Support

/// IssuerSigned (ISO/IEC 18013-5 §8.3.2.1.2.2): the issuer-signed part of an mdoc document, and
/// what OpenID4VCI 1.0 Appendix A.2 returns as the `mso_mdoc` credential (base64url of its CBOR).
///
///     IssuerSigned = { ? "nameSpaces": IssuerNameSpaces, "issuerAuth": IssuerAuth }
///     IssuerNameSpaces = { + NameSpace => [ + IssuerSignedItemBytes ] }
///     IssuerAuth = COSE_Sign1 ; payload is MobileSecurityObjectBytes
public struct IssuerSigned: Equatable, Sendable {
    /// nameSpace → items, in the order they were issued or received.
    public let nameSpaces: [String: [IssuerSignedItemBytes]]
    /// Untagged COSE_Sign1, as §9.1.2.4 defines IssuerAuth.
    public let issuerAuth: COSESign1

    public init(nameSpaces: [String: [IssuerSignedItemBytes]], issuerAuth: COSESign1) {
        self.nameSpaces = nameSpaces
        self.issuerAuth = issuerAuth
    }

    public var cborValue: CBORValue {
        var entries: [CBORMapEntry] = []
        if !nameSpaces.isEmpty {
            let nameSpacesValue = CBORValue.map(nameSpaces.map { CBORMapEntry(.text($0.key), .array($0.value.map(\.cborValue))) })
            entries.append(CBORMapEntry("nameSpaces", nameSpacesValue))
        }
        entries.append(CBORMapEntry("issuerAuth", issuerAuth.cborValue(tagged: false)))
        return .map(entries)
    }

    /// Deterministic CBOR (RFC 8949 §4.2); the item bytes inside are kept exactly.
    public func encoded() -> [UInt8] { cborValue.encoded() }

    /// The `credential` value of an OpenID4VCI `mso_mdoc` credential response (Appendix A.2).
    public var base64URL: String { Base64URL.encode(encoded()) }

    public init(decoding bytes: [UInt8]) throws(MDocError) {
        let value: CBORValue
        do { value = try CBORValue.decode(bytes) } catch { throw .malformed("\(error)") }
        try self.init(value)
    }

    public init(base64URL: String) throws(MDocError) {
        guard let bytes = Base64URL.decode(base64URL) else { throw .malformed("not base64url") }
        try self.init(decoding: bytes)
    }

    public init(_ value: CBORValue) throws(MDocError) {
        let root = CBORField(value, path: "IssuerSigned")
        var nameSpaces: [String: [IssuerSignedItemBytes]] = [:]
        let authField: CBORField
        do {
            let map = try root.map()
            if let nameSpacesField = map.optional("nameSpaces") {
                for (key, itemsField) in try nameSpacesField.map().fields() {
                    guard let nameSpace = key.textValue else { throw itemsField.error("nameSpace key must be text") }
                    let items = try itemsField.array()
                    guard !items.isEmpty else { throw itemsField.error("must hold at least one item") }
                    var decoded: [IssuerSignedItemBytes] = []
                    for item in items { decoded.append(try IssuerSignedItemBytes(item)) }
                    nameSpaces[nameSpace] = decoded
                }
            }
            authField = try map.required("issuerAuth")
        } catch {
            throw .malformed("\(error)")
        }
        do {
            self.issuerAuth = try COSESign1(authField.value)
        } catch {
            throw .malformed("IssuerSigned.issuerAuth: \(error)")
        }
        self.nameSpaces = nameSpaces
    }

    /// The MSO inside issuerAuth, decoded but NOT verified; use `verify` before trusting it.
    public func unverifiedMobileSecurityObject() throws(MDocError) -> MobileSecurityObject {
        guard let payload = issuerAuth.payload else { throw .malformed("issuerAuth has a detached payload") }
        let value: CBORValue
        do { value = try CBORValue.decode(payload) } catch { throw .malformed("issuerAuth.payload: \(error)") }
        let inner: CBORField
        do {
            inner = try CBORField(value, path: "MobileSecurityObject").embedded()
        } catch {
            throw .malformed(error.description)
        }
        return try MobileSecurityObject(inner)
    }
}
