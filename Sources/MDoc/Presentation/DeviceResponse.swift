import CBOR
import COSE
import Support

/// DeviceResponse (ISO/IEC 18013-5 §8.3.2.1.2.2): what an mdoc returns to a reader, and what
/// OpenID4VP 1.0 Appendix B.2.4 carries (base64url) as the `vp_token` of an `mso_mdoc` query.
///
///     DeviceResponse = { "version": tstr, ? "documents": [+ Document],
///                        ? "documentErrors": [+ DocumentError], "status": uint }
///     Document = { "docType": DocType, "issuerSigned": IssuerSigned,
///                  "deviceSigned": DeviceSigned, ? "errors": Errors }
public struct DeviceResponse: Sendable {
    /// §8.3.2.1.2.2: "1.0" is the only version.
    public static let currentVersion = "1.0"

    public let version: String
    public let documents: [MDocDocument]
    /// §8.3.2.1.2.3 status codes: 0 OK, 10 general error, 11 CBOR decoding error, 12 CBOR
    /// validation error.
    public let status: UInt64
    /// docType → error code, for documents the mdoc did not return.
    public let documentErrors: [String: Int64]

    public init(version: String = DeviceResponse.currentVersion, documents: [MDocDocument], status: UInt64 = 0,
                documentErrors: [String: Int64] = [:]) {
        self.version = version
        self.documents = documents
        self.status = status
        self.documentErrors = documentErrors
    }

    public var cborValue: CBORValue {
        var entries: [CBORMapEntry] = [CBORMapEntry("version", .text(version))]
        if !documents.isEmpty { entries.append(CBORMapEntry("documents", .array(documents.map(\.cborValue)))) }
        if !documentErrors.isEmpty {
            entries.append(CBORMapEntry("documentErrors", .array(documentErrors.map { .map([CBORMapEntry(.text($0.key), CBORValue($0.value))]) })))
        }
        entries.append(CBORMapEntry("status", .unsigned(status)))
        return .map(entries)
    }

    public func encoded() -> [UInt8] { cborValue.encoded() }

    /// The `vp_token` value of OpenID4VP 1.0 Appendix B.2.4 (base64url without padding).
    public var base64URL: String { Base64URL.encode(encoded()) }

    /// Strict decoding: the CBOR decoder bounds nesting and refuses lengths longer than the
    /// input, so a CBOR bomb is a `.malformed` error, never a crash or a huge allocation.
    public init(decoding bytes: [UInt8]) throws(MDocError) {
        let value: CBORValue
        do { value = try CBORValue.decode(bytes) } catch { throw .malformed("DeviceResponse: \(error)") }
        try self.init(value)
    }

    public init(base64URL: String) throws(MDocError) {
        guard let bytes = Base64URL.decode(base64URL) else { throw .malformed("DeviceResponse is not base64url") }
        try self.init(decoding: bytes)
    }

    public init(_ value: CBORValue) throws(MDocError) {
        let root = CBORField(value, path: "DeviceResponse")
        do {
            let map = try root.map()
            version = try map.required("version").text()
            status = try map.required("status").uint()
            var documents: [MDocDocument] = []
            if let field = map.optional("documents") {
                for document in try field.array() { documents.append(try MDocDocument(document)) }
            }
            self.documents = documents
            var errors: [String: Int64] = [:]
            if let field = map.optional("documentErrors") {
                for entry in try field.array() {
                    for (key, code) in try entry.map().fields() {
                        guard let docType = key.textValue else { throw code.error("docType key must be text") }
                        errors[docType] = try code.int()
                    }
                }
            }
            documentErrors = errors
        } catch let error as CBORFieldError {
            throw .malformed(error.description)
        } catch let error as MDocError {
            throw error
        } catch {
            throw .malformed("\(error)")
        }
    }
}

/// One Document of a DeviceResponse (§8.3.2.1.2.2).
public struct MDocDocument: Sendable {
    public let docType: String
    public let issuerSigned: IssuerSigned
    public let deviceSigned: DeviceSigned

    public init(docType: String, issuerSigned: IssuerSigned, deviceSigned: DeviceSigned) {
        self.docType = docType
        self.issuerSigned = issuerSigned
        self.deviceSigned = deviceSigned
    }

    public var cborValue: CBORValue {
        .map([CBORMapEntry("docType", .text(docType)), CBORMapEntry("issuerSigned", issuerSigned.cborValue),
              CBORMapEntry("deviceSigned", deviceSigned.cborValue)])
    }

    init(_ field: CBORField) throws {
        let map = try field.map()
        docType = try map.required("docType").text()
        issuerSigned = try IssuerSigned(map.required("issuerSigned").value)
        deviceSigned = try DeviceSigned(map.required("deviceSigned"))
    }
}

/// DeviceSigned (§8.3.2.1.2.2):
///
///     DeviceSigned = { "nameSpaces": DeviceNameSpacesBytes, "deviceAuth": DeviceAuth }
///     DeviceNameSpacesBytes = #6.24(bstr .cbor DeviceNameSpaces)
///     DeviceAuth = { "deviceSignature": DeviceSignature // "deviceMac": DeviceMac }
///
/// The name spaces are kept as the exact bytes received, since DeviceAuthentication signs them.
public struct DeviceSigned: Sendable {
    public enum Authentication: Sendable {
        /// COSE_Sign1 with a detached payload (§9.1.3.6).
        case signature(COSESign1)
        /// COSE_Mac0 (§9.1.3.5), kept undecoded: this verifier does not support it.
        case mac(CBORValue)
    }

    /// The content of the tag-24 byte string DeviceNameSpacesBytes.
    public let nameSpacesBytes: [UInt8]
    /// nameSpace → elementIdentifier → value, decoded from `nameSpacesBytes`.
    public let nameSpaces: [String: [String: CBORValue]]
    public let deviceAuth: Authentication

    /// No device-signed elements: `#6.24(bstr .cbor {})`, what a PID presentation sends.
    public init(signature: COSESign1, nameSpacesBytes: [UInt8] = CBORValue.map([]).encoded()) {
        self.nameSpacesBytes = nameSpacesBytes
        self.nameSpaces = [:]
        self.deviceAuth = .signature(signature)
    }

    /// The tag-24 data item DeviceNameSpacesBytes, as DeviceAuthentication embeds it.
    public var nameSpacesItem: CBORValue { .tagged(CBORValue.tagEncodedCBOR, .bytes(nameSpacesBytes)) }

    public var cborValue: CBORValue {
        let auth: CBOREntryPair
        switch deviceAuth {
        case .signature(let sign1): auth = ("deviceSignature", sign1.cborValue(tagged: false))
        case .mac(let value): auth = ("deviceMac", value)
        }
        return .map([CBORMapEntry("nameSpaces", nameSpacesItem), CBORMapEntry("deviceAuth", .map([CBORMapEntry(.text(auth.0), auth.1)]))])
    }

    private typealias CBOREntryPair = (String, CBORValue)

    init(_ field: CBORField) throws {
        let map = try field.map()
        let nameSpacesField = try map.required("nameSpaces")
        let inner = try nameSpacesField.embedded()
        nameSpacesBytes = nameSpacesField.value.embeddedBytes ?? []
        var nameSpaces: [String: [String: CBORValue]] = [:]
        for (key, elementsField) in try inner.map().fields() {
            guard let nameSpace = key.textValue else { throw elementsField.error("nameSpace key must be text") }
            var elements: [String: CBORValue] = [:]
            for (identifier, value) in try elementsField.map().fields() {
                guard let name = identifier.textValue else { throw value.error("element identifier must be text") }
                elements[name] = value.value
            }
            nameSpaces[nameSpace] = elements
        }
        self.nameSpaces = nameSpaces
        let auth = try map.required("deviceAuth").map()
        switch (auth.optional("deviceSignature"), auth.optional("deviceMac")) {
        case (let signature?, nil):
            do { deviceAuth = .signature(try COSESign1(signature.value)) } catch {
                throw signature.error("\(error)")
            }
        case (nil, let mac?): deviceAuth = .mac(mac.value)
        case (nil, nil): throw CBORFieldError(path: auth.path, reason: "holds neither deviceSignature nor deviceMac")
        default: throw CBORFieldError(path: auth.path, reason: "deviceSignature and deviceMac are exclusive")
        }
    }
}
