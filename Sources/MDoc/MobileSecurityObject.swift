import CBOR
import COSE
import Cryptography

/// The digest algorithms ISO/IEC 18013-5 §9.1.2.5 allows for value digests, by their MSO names.
public enum MDocDigestAlgorithm: String, Sendable, CaseIterable {
    case sha256 = "SHA-256"
    case sha384 = "SHA-384"
    case sha512 = "SHA-512"

    public func digest(_ bytes: [UInt8]) -> [UInt8] {
        switch self {
        case .sha256: return Digest.sha256(bytes)
        case .sha384: return Digest.sha384(bytes)
        case .sha512: return Digest.sha512(bytes)
        }
    }
}

/// ValidityInfo (ISO/IEC 18013-5 §9.1.2.4), Unix seconds. Encoded as tag-0 tdates without
/// fractional seconds, as the standard requires of every tdate.
public struct ValidityInfo: Equatable, Sendable {
    public var signed: Int64
    public var validFrom: Int64
    public var validUntil: Int64
    public var expectedUpdate: Int64?

    public init(signed: Int64, validFrom: Int64, validUntil: Int64, expectedUpdate: Int64? = nil) {
        self.signed = signed
        self.validFrom = validFrom
        self.validUntil = validUntil
        self.expectedUpdate = expectedUpdate
    }

    /// §9.1.2.4: validFrom is not before signed, and validUntil is after validFrom.
    var consistencyProblem: String? {
        if validFrom < signed { return "validFrom is before signed" }
        if validUntil <= validFrom { return "validUntil is not after validFrom" }
        return nil
    }

    var cborValue: CBORValue {
        var entries = [CBORMapEntry("signed", .dateTime(signed)), CBORMapEntry("validFrom", .dateTime(validFrom)),
                       CBORMapEntry("validUntil", .dateTime(validUntil))]
        if let expectedUpdate { entries.append(CBORMapEntry("expectedUpdate", .dateTime(expectedUpdate))) }
        return .map(entries)
    }

    init(_ field: CBORField) throws(CBORFieldError) {
        let map = try field.map()
        signed = try map.required("signed").dateTime()
        validFrom = try map.required("validFrom").dateTime()
        validUntil = try map.required("validUntil").dateTime()
        expectedUpdate = try map.optional("expectedUpdate")?.dateTime()
        if let problem = consistencyProblem { throw field.error(problem) }
    }
}

/// The Token Status List reference an mdoc carries in its MSO (draft-ietf-oauth-status-list,
/// "Referenced Token" in COSE/mdoc form): `status: {status_list: {idx: uint, uri: tstr}}`.
public struct StatusListReference: Equatable, Sendable {
    /// Position of this credential's status in the list.
    public var index: UInt64
    /// The URI of the Status List Token.
    public var uri: String

    public init(index: UInt64, uri: String) {
        self.index = index
        self.uri = uri
    }

    var cborValue: CBORValue { ["status_list": ["idx": .unsigned(index), "uri": .text(uri)]] }

    /// nil when `status` names only other mechanisms than a status list.
    static func decode(_ field: CBORField) throws(CBORFieldError) -> StatusListReference? {
        guard let list = try field.map().optional("status_list") else { return nil }
        let map = try list.map()
        return StatusListReference(index: try map.required("idx").uint(), uri: try map.required("uri").text())
    }
}

/// MobileSecurityObject (ISO/IEC 18013-5 §9.1.2.4), the payload of issuerAuth as
/// `#6.24(bstr .cbor MobileSecurityObject)`. It binds the digests of every element, the device
/// key, the docType and the validity under the document signer's signature.
public struct MobileSecurityObject: Equatable, Sendable {
    public static let currentVersion = "1.0"

    public var version: String
    public var digestAlgorithm: MDocDigestAlgorithm
    /// nameSpace → digestID → digest.
    public var valueDigests: [String: [UInt64: [UInt8]]]
    public var deviceKey: COSEKey
    public var docType: String
    public var validityInfo: ValidityInfo
    public var status: StatusListReference?

    public init(
        version: String = MobileSecurityObject.currentVersion, digestAlgorithm: MDocDigestAlgorithm = .sha256,
        valueDigests: [String: [UInt64: [UInt8]]], deviceKey: COSEKey, docType: String, validityInfo: ValidityInfo,
        status: StatusListReference? = nil
    ) {
        self.version = version
        self.digestAlgorithm = digestAlgorithm
        self.valueDigests = valueDigests
        self.deviceKey = deviceKey
        self.docType = docType
        self.validityInfo = validityInfo
        self.status = status
    }

    /// Map keys are sorted by the encoder (RFC 8949 §4.2.1), so dictionary order never matters.
    public var cborValue: CBORValue {
        let digests = valueDigests.map { nameSpace, byID in
            CBORMapEntry(.text(nameSpace), .map(byID.map { CBORMapEntry(.unsigned($0.key), .bytes($0.value)) }))
        }
        var entries = [
            CBORMapEntry("version", .text(version)),
            CBORMapEntry("digestAlgorithm", .text(digestAlgorithm.rawValue)),
            CBORMapEntry("valueDigests", .map(digests)),
            CBORMapEntry("deviceKeyInfo", ["deviceKey": deviceKey.cborValue]),
            CBORMapEntry("docType", .text(docType)),
            CBORMapEntry("validityInfo", validityInfo.cborValue),
        ]
        if let status { entries.append(CBORMapEntry("status", status.cborValue)) }
        return .map(entries)
    }

    /// Reads an MSO; `field` is the decoded map (already out of its tag-24 wrapper).
    public init(_ field: CBORField) throws(MDocError) {
        do {
            let map = try field.map()
            let versionField = try map.required("version")
            version = try versionField.text()
            guard version == Self.currentVersion else { throw versionField.error("unsupported version \(version)") }
            let algorithmName = try map.required("digestAlgorithm").text()
            guard let algorithm = MDocDigestAlgorithm(rawValue: algorithmName) else {
                throw MDocError.unsupportedDigestAlgorithm(algorithmName)
            }
            digestAlgorithm = algorithm
            var digests: [String: [UInt64: [UInt8]]] = [:]
            for (key, nameSpaceField) in try map.required("valueDigests").map().fields() {
                guard let nameSpace = key.textValue else { throw nameSpaceField.error("nameSpace key must be text") }
                var byID: [UInt64: [UInt8]] = [:]
                for (idKey, digestField) in try nameSpaceField.map().fields() {
                    guard let id = idKey.uintValue else { throw digestField.error("digestID must be an unsigned integer") }
                    byID[id] = try digestField.bytes()
                }
                digests[nameSpace] = byID
            }
            valueDigests = digests
            let keyField = try map.required("deviceKeyInfo").map().required("deviceKey")
            do { deviceKey = try COSEKey(keyField.value) } catch { throw keyField.error("\(error)") }
            docType = try map.required("docType").text()
            validityInfo = try ValidityInfo(map.required("validityInfo"))
            status = try map.optional("status").flatMap { field throws(CBORFieldError) in try StatusListReference.decode(field) }
        } catch let error as CBORFieldError {
            throw .malformed(error.description)
        } catch let error as MDocError {
            throw error
        } catch {
            throw .malformed("\(error)")
        }
    }
}
