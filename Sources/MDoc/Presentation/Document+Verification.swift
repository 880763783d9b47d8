import CBOR
import COSE
import Cryptography

extension DeviceResponseVerifier {
    /// Issuer and device authentication of one document; the verified document when every one
    /// of its checks passed.
    func verify(
        _ document: MDocDocument, sessionTranscript: SessionTranscript, at time: Int64,
        into result: inout DeviceResponseVerification
    ) -> VerifiedDocument? {
        let failuresBefore = result.checks.filter { !$0.ok }.count
        let issuerSigned = document.issuerSigned

        // §9.3.3: the document signer certificate, path-validated to a trusted IACA root with
        // the document signer EKU of Annex B.1.4.
        let chain: [Certificate]
        var signerKey: PublicKey?
        if let chains, !trustAnchors.isEmpty, let ders = try? issuerSigned.issuerAuth.x5chain(), !ders.isEmpty,
           let validated = try? chains.validate(der: ders, roots: trustAnchors, rootsID: ValidatedChainCache.identity(of: trustAnchors),
                                                at: time, requiredExtendedKeyUsage: AnnexB.documentSignerEKU) {
            // The same check as below, its outcome remembered for this chain and these roots.
            chain = validated.chain
            signerKey = validated.leafKey
            result.pass("issuer_certificate", "\(validated.leafSubject) chains to IACA \(validated.anchorSubject ?? "?")")
        } else {
            do {
                chain = try issuerSigned.documentSignerChain()
            } catch {
                result.fail("issuer_certificate", "\(error)")
                return nil
            }
            if trustAnchors.isEmpty {
                result.fail("issuer_certificate", "no trusted IACA root is configured")
            } else {
                do {
                    let path = try Certificate.verifyChain(
                        leaf: chain[0], intermediates: Array(chain.dropFirst()), roots: trustAnchors, at: time,
                        requiredExtendedKeyUsage: AnnexB.documentSignerEKU)
                    result.pass("issuer_certificate", "\(chain[0].subjectText) chains to IACA \(path.last?.subjectText ?? "?")")
                } catch {
                    result.fail("issuer_certificate", "\(chain[0].subjectText) does not chain to a trusted IACA root: \(error)")
                }
            }
        }
        let signer = chain[0]

        // §9.1.2.4: the MSO signature by the document signer, alg protected and allowed.
        do {
            let key = try signerKey ?? signer.publicKey()
            try issuerSigned.issuerAuth.verify(key: key, allowList: issuerAlgorithms)
            result.pass("issuer_signature", "MSO signed by \(signer.subjectText)")
        } catch {
            result.fail("issuer_signature", "\(error)")
        }

        let mso: MobileSecurityObject
        do {
            mso = try issuerSigned.unverifiedMobileSecurityObject()
        } catch {
            result.fail("mobile_security_object", "\(error)")
            return nil
        }

        // §9.3.1: the document's docType, the MSO's and the requested one all agree.
        if mso.docType != document.docType {
            result.fail("doc_type", "document says \(document.docType), its MSO \(mso.docType)")
        } else if let expectedDocType, mso.docType != expectedDocType {
            result.fail("doc_type", "\(mso.docType), expected \(expectedDocType)")
        } else {
            result.pass("doc_type", mso.docType)
        }

        // §9.3.1 step 5 and §9.3.3: within validFrom...validUntil, signed while the certificate was valid.
        let validity = mso.validityInfo
        if time < validity.validFrom {
            result.fail("validity", "not valid before \(validity.validFrom) (now \(time))")
        } else if time > validity.validUntil {
            result.fail("validity", "expired at \(validity.validUntil) (now \(time))")
        } else if !(signer.notBefore...signer.notAfter).contains(validity.signed) {
            result.fail("validity", "MSO signed at \(validity.signed), outside the document signer certificate's validity")
        } else {
            result.pass("validity", "valid from \(validity.validFrom) until \(validity.validUntil)")
        }

        // §9.3.1 step 4: every IssuerSignedItem hashes to the MSO's value digest.
        var elements: [String: [String: CBORValue]] = [:]
        var digestProblem: String?
        var count = 0
        outer: for (nameSpace, items) in issuerSigned.nameSpaces.sorted(by: { $0.key < $1.key }) {
            let digests = mso.valueDigests[nameSpace] ?? [:]
            var values: [String: CBORValue] = [:]
            var seen = Set<UInt64>()
            for entry in items {
                let item = entry.item
                if !seen.insert(item.digestID).inserted {
                    digestProblem = "duplicate digestID \(item.digestID) in \(nameSpace)"; break outer
                }
                if values[item.elementIdentifier] != nil {
                    digestProblem = "duplicate element \(item.elementIdentifier) in \(nameSpace)"; break outer
                }
                guard let expected = digests[item.digestID] else {
                    digestProblem = "\(nameSpace)/\(item.elementIdentifier): no value digest for digestID \(item.digestID)"; break outer
                }
                guard ConstantTime.equal(entry.digest(mso.digestAlgorithm), expected) else {
                    digestProblem = "\(nameSpace)/\(item.elementIdentifier): digest of digestID \(item.digestID) does not match the MSO"
                    break outer
                }
                values[item.elementIdentifier] = item.elementValue
                count += 1
            }
            elements[nameSpace] = values
        }
        if let digestProblem {
            result.fail("value_digests", digestProblem)
        } else {
            result.pass("value_digests", "\(count) element(s) match their \(mso.digestAlgorithm.rawValue) digests")
        }

        verifyDevice(document, mso: mso, sessionTranscript: sessionTranscript, into: &result)

        guard result.checks.filter({ !$0.ok }).count == failuresBefore else { return nil }
        return VerifiedDocument(docType: mso.docType, elements: elements, validityInfo: validity, status: mso.status,
                                documentSignerChain: chain)
    }

    /// §9.1.3: mdoc authentication by the key the issuer bound into the MSO.
    private func verifyDevice(
        _ document: MDocDocument, mso: MobileSecurityObject, sessionTranscript: SessionTranscript,
        into result: inout DeviceResponseVerification
    ) {
        let deviceSigned = document.deviceSigned
        guard deviceSigned.nameSpaces.values.allSatisfy(\.isEmpty) else {
            // Device-signed elements need the MSO's keyAuthorizations (§9.1.2.4); not supported.
            result.fail("device_signature", "device-signed data elements are not supported (deviceSigned.nameSpaces must be empty)")
            return
        }
        let signature: COSESign1
        switch deviceSigned.deviceAuth {
        case .mac:
            result.fail("device_signature", "deviceMac (§9.1.3.5, needs a reader key agreement) is not supported; send deviceSignature")
            return
        case .signature(let sign1):
            signature = sign1
        }
        guard signature.payload == nil else {
            result.fail("device_signature", "the DeviceAuthentication payload must be detached (nil), §9.1.3.6")
            return
        }
        let key: PublicKey
        do { key = try mso.deviceKey.publicKey() } catch {
            result.fail("device_signature", "MSO deviceKey: \(error)")
            return
        }
        let payload = sessionTranscript.deviceAuthenticationBytes(
            docType: document.docType, deviceNameSpacesBytes: deviceSigned.nameSpacesBytes)
        do {
            try signature.verify(key: key, allowList: deviceAlgorithms, detachedPayload: payload)
            result.pass("device_signature", "DeviceAuthentication over the session transcript signed by the MSO's deviceKey")
        } catch {
            result.fail("device_signature", "DeviceAuthentication over the session transcript: \(error)")
        }
    }
}
