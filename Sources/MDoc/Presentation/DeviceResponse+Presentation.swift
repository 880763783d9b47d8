import CBOR
import COSE
import Cryptography

extension DeviceResponse {
    /// What a wallet sends (ISO/IEC 18013-5 §8.3.2.1.2.2, §9.1.3): one document with the
    /// issuer-signed items of the requested elements only (selective disclosure: the items of the
    /// others are left out, their digests stay hidden in the MSO), no device-signed elements, and
    /// a deviceSignature over DeviceAuthentication for `sessionTranscript` with the device key the
    /// MSO names.
    ///
    /// - Parameters:
    ///   - elements: nameSpace → element identifiers to disclose; nil discloses every element.
    ///     An element the credential does not hold is refused, so nothing is silently missing.
    ///   - deviceKey: the private key of the MSO's `deviceKeyInfo.deviceKey`.
    public static func present(
        _ issuerSigned: IssuerSigned, elements: [String: Set<String>]?, deviceKey: PrivateKey,
        sessionTranscript: SessionTranscript, algorithm: COSEAlgorithm = .es256
    ) throws(MDocError) -> DeviceResponse {
        let mso = try issuerSigned.unverifiedMobileSecurityObject()
        guard let boundKey = try? mso.deviceKey.publicKey(), boundKey == deviceKey.publicKey else {
            throw .invalidInput("the device key is not the MSO's deviceKey")
        }
        var selected: [String: [IssuerSignedItemBytes]] = [:]
        if let elements {
            for (nameSpace, identifiers) in elements where !identifiers.isEmpty {
                let items = issuerSigned.nameSpaces[nameSpace] ?? []
                let chosen = items.filter { identifiers.contains($0.item.elementIdentifier) }
                let missing = identifiers.subtracting(chosen.map(\.item.elementIdentifier))
                guard missing.isEmpty else {
                    throw .invalidInput("the credential has no \(missing.sorted().joined(separator: ", ")) in \(nameSpace)")
                }
                selected[nameSpace] = chosen
            }
        } else {
            selected = issuerSigned.nameSpaces
        }
        let deviceNameSpacesBytes = CBORValue.map([]).encoded()
        let payload = sessionTranscript.deviceAuthenticationBytes(docType: mso.docType, deviceNameSpacesBytes: deviceNameSpacesBytes)
        let signature: COSESign1
        do {
            signature = try COSESign1.sign(payload: payload, key: deviceKey, algorithm: algorithm, detached: true)
        } catch {
            throw .signature(error)
        }
        let document = MDocDocument(
            docType: mso.docType, issuerSigned: IssuerSigned(nameSpaces: selected, issuerAuth: issuerSigned.issuerAuth),
            deviceSigned: DeviceSigned(signature: signature, nameSpacesBytes: deviceNameSpacesBytes))
        return DeviceResponse(documents: [document])
    }
}
