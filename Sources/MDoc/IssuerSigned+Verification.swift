import CBOR
import COSE
import Cryptography

/// What a verified IssuerSigned vouches for: every element below hashed to the MSO's digest, and
/// the MSO carries a valid signature of `documentSignerChain[0]`.
public struct VerifiedIssuerSigned: Sendable {
    public let docType: String
    public let validityInfo: ValidityInfo
    public let deviceKey: COSEKey
    public let status: StatusListReference?
    /// nameSpace → elementIdentifier → elementValue (tags such as 1004 kept as received).
    public let elements: [String: [String: CBORValue]]
    /// From issuerAuth's x5chain, leaf (document signer) first.
    public let documentSignerChain: [Certificate]
    public let mobileSecurityObject: MobileSecurityObject
}

extension IssuerSigned {
    /// Verifies an IssuerSigned as a reader does with the issuer data (ISO/IEC 18013-5 §9.3.1):
    ///
    /// 1. the document signer certificate from `x5chain` (label 33), checked against
    ///    `trustAnchors` (IACA roots) at `time` with the document signer EKU (Annex B), unless
    ///    `trustAnchors` is nil (the caller trusts the certificate some other way);
    /// 2. the issuerAuth signature, with `alg` protected and in `algorithms`;
    /// 3. the MSO: `signed` within the certificate's validity, `time` within validFrom...validUntil,
    ///    and `docType` equal to `expectedDocType` when given;
    /// 4. every IssuerSignedItem: digestIDs and element identifiers unique per nameSpace, and
    ///    the digest of its tag-24 bytes equal to the MSO's value digest.
    public func verify(
        at time: Int64, trustAnchors: [Certificate]?, expectedDocType: String? = nil,
        algorithms: Set<COSEAlgorithm> = [.es256, .es384, .es512, .edDSA]
    ) throws(MDocError) -> VerifiedIssuerSigned {
        let chain = try documentSignerChain()
        let signer = chain[0]
        if let trustAnchors {
            do {
                try Certificate.verifyChain(
                    leaf: signer, intermediates: Array(chain.dropFirst()), roots: trustAnchors, at: time,
                    requiredExtendedKeyUsage: AnnexB.documentSignerEKU)
            } catch {
                throw .untrustedDocumentSigner("\(error)")
            }
        }
        let signerKey: PublicKey
        do { signerKey = try signer.publicKey() } catch { throw .untrustedDocumentSigner("certificate key: \(error)") }
        do { try issuerAuth.verify(key: signerKey, allowList: algorithms) } catch { throw .signature(error) }

        let mso = try unverifiedMobileSecurityObject()
        if let expectedDocType, mso.docType != expectedDocType {
            throw .docTypeMismatch(expected: expectedDocType, found: mso.docType)
        }
        let validity = mso.validityInfo
        guard (signer.notBefore...signer.notAfter).contains(validity.signed) else {
            throw .untrustedDocumentSigner("MSO signed outside the certificate's validity")
        }
        if time < validity.validFrom { throw .notYetValid(validFrom: validity.validFrom) }
        if time > validity.validUntil { throw .expired(validUntil: validity.validUntil) }

        var elements: [String: [String: CBORValue]] = [:]
        for (nameSpace, items) in nameSpaces {
            let digests = mso.valueDigests[nameSpace] ?? [:]
            var values: [String: CBORValue] = [:]
            var digestIDs = Set<UInt64>()
            for entry in items {
                let item = entry.item
                guard digestIDs.insert(item.digestID).inserted else {
                    throw .malformed("duplicate digestID \(item.digestID) in \(nameSpace)")
                }
                guard values[item.elementIdentifier] == nil else {
                    throw .malformed("duplicate element \(item.elementIdentifier) in \(nameSpace)")
                }
                guard let expected = digests[item.digestID] else {
                    throw .missingDigest(nameSpace: nameSpace, digestID: item.digestID)
                }
                guard entry.digest(mso.digestAlgorithm) == expected else {
                    throw .digestMismatch(nameSpace: nameSpace, digestID: item.digestID)
                }
                values[item.elementIdentifier] = item.elementValue
            }
            elements[nameSpace] = values
        }
        return VerifiedIssuerSigned(
            docType: mso.docType, validityInfo: validity, deviceKey: mso.deviceKey, status: mso.status,
            elements: elements, documentSignerChain: chain, mobileSecurityObject: mso)
    }

    /// The certificates of issuerAuth's x5chain, leaf first; §9.1.2.4 requires at least one.
    public func documentSignerChain() throws(MDocError) -> [Certificate] {
        let ders: [[UInt8]]
        do { ders = try issuerAuth.x5chain() } catch { throw .malformed("issuerAuth: \(error)") }
        guard !ders.isEmpty else { throw .malformed("issuerAuth has no x5chain") }
        var chain: [Certificate] = []
        for der in ders {
            do { chain.append(try Certificate(der: der)) } catch { throw .malformed("issuerAuth x5chain: \(error)") }
        }
        return chain
    }
}
