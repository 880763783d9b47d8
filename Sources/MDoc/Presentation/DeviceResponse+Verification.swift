import CBOR
import COSE
import Cryptography

/// One named check of a DeviceResponse and its outcome. The `Verification` target copies these
/// into its `VerificationReport` one for one, so a relying party sees which step failed and why.
public struct MDocCheck: Equatable, Sendable {
    public let name: String
    public let ok: Bool
    public let detail: String

    public init(name: String, ok: Bool, detail: String) {
        self.name = name
        self.ok = ok
        self.detail = detail
    }
}

/// A document whose issuer and device authentication both passed.
public struct VerifiedDocument: Sendable {
    public let docType: String
    /// nameSpace → elementIdentifier → elementValue, the issuer-signed elements only.
    public let elements: [String: [String: CBORValue]]
    public let validityInfo: ValidityInfo
    public let status: StatusListReference?
    /// The x5chain of issuerAuth, document signer first.
    public let documentSignerChain: [Certificate]
}

/// The verdict on a DeviceResponse: every check that ran, and the documents that passed all of
/// theirs.
public struct DeviceResponseVerification: Sendable {
    public internal(set) var checks: [MDocCheck] = []
    public internal(set) var documents: [VerifiedDocument] = []

    /// True when at least one check ran and none failed.
    public var verified: Bool { !checks.isEmpty && checks.allSatisfy(\.ok) }

    mutating func pass(_ name: String, _ detail: String) { checks.append(MDocCheck(name: name, ok: true, detail: detail)) }
    mutating func fail(_ name: String, _ detail: String) { checks.append(MDocCheck(name: name, ok: false, detail: detail)) }
}

/// Verifies a DeviceResponse as an mdoc reader does (ISO/IEC 18013-5 §9.3.1): the response
/// itself (§8.3.2.1.2.2: version, status, documents), issuer data authentication (§9.1.2: the
/// document signer chain to a trusted IACA root, the MSO signature, docType, validity, the digest
/// of every IssuerSignedItem) and mdoc authentication (§9.1.3: the device signature over
/// DeviceAuthentication with the MSO's deviceKey). The SessionTranscript is the caller's: OpenID4VP's
/// (`SessionTranscript.openID4VP`), Apple's, or any other.
///
/// Every check that can run does, even after another failed, so the report names every problem;
/// a check whose input is missing (no MSO, no key) is reported failed with the reason.
public struct DeviceResponseVerifier: Sendable {
    /// IACA root certificates the document signer must chain to.
    public var trustAnchors: [Certificate]
    /// The docType the request asked for; nil accepts any (still matched against the MSO).
    public var expectedDocType: String?
    /// OpenID4VP and Apple's envelope expect exactly one document per DeviceResponse (HAIP 1.0
    /// §5.3.1: each mdoc in its own DeviceResponse); false allows several.
    public var singleDocument = true
    public var issuerAlgorithms: Set<COSEAlgorithm> = [.es256, .es384, .es512, .edDSA]
    public var deviceAlgorithms: Set<COSEAlgorithm> = [.es256, .es384, .es512]
    /// Document signer chains already validated against `trustAnchors` (with the document signer
    /// EKU), so that a verifier meeting one issuer's documents again does not decode its
    /// `x5chain` and run path validation again for each (see `ValidatedChainCache`); nil
    /// validates every time. A chain that fails is never cached, and is reported as without it.
    public var chains: ValidatedChainCache?

    public init(trustAnchors: [Certificate], expectedDocType: String? = nil) {
        self.trustAnchors = trustAnchors
        self.expectedDocType = expectedDocType
    }

    /// Decodes, then verifies. Bytes that are not a DeviceResponse give one failed check.
    public func verify(_ bytes: [UInt8], sessionTranscript: SessionTranscript, at time: Int64) -> DeviceResponseVerification {
        do {
            return verify(try DeviceResponse(decoding: bytes), sessionTranscript: sessionTranscript, at: time)
        } catch {
            var result = DeviceResponseVerification()
            result.fail("device_response", "\(error)")
            return result
        }
    }

    public func verify(_ response: DeviceResponse, sessionTranscript: SessionTranscript, at time: Int64) -> DeviceResponseVerification {
        var result = DeviceResponseVerification()
        guard response.version == DeviceResponse.currentVersion else {
            result.fail("device_response", "version \(response.version), expected \(DeviceResponse.currentVersion)")
            return result
        }
        guard response.status == 0 else {
            result.fail("device_response", "status \(response.status) (\(Self.statusMeaning(response.status))), expected 0 (OK)")
            return result
        }
        if response.documents.isEmpty {
            let errors = response.documentErrors.map { "\($0.key): \($0.value)" }.sorted().joined(separator: ", ")
            result.fail("device_response", "no documents" + (errors.isEmpty ? "" : " (documentErrors: \(errors))"))
            return result
        }
        if singleDocument, response.documents.count != 1 {
            result.fail("device_response", "\(response.documents.count) documents where exactly one is expected")
            return result
        }
        result.pass("device_response", "version 1.0, status 0, \(response.documents.count) document(s)")
        for document in response.documents {
            if let verified = verify(document, sessionTranscript: sessionTranscript, at: time, into: &result) {
                result.documents.append(verified)
            }
        }
        return result
    }

    /// §8.3.2.1.2.3.
    static func statusMeaning(_ status: UInt64) -> String {
        switch status {
        case 10: return "general error"
        case 11: return "CBOR decoding error"
        case 12: return "CBOR validation error"
        default: return "unknown status"
        }
    }
}
