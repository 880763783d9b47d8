/// Certificate profiles of ISO/IEC 18013-5 Annex B (mdoc PKI): the IACA root that a PID
/// Provider publishes as its trust anchor, the document signer (DS) certificate that signs each
/// mdoc's MSO, and the IACA's CRL.
public enum AnnexB {
    /// id-mdl-kp-mdlDS: the extendedKeyUsage a document signer certificate must carry.
    public static let documentSignerEKU = "1.0.18013.5.1.2"
    /// The longest validity each profile allows (IACA ≤ 20 years, DS ≤ 457 days).
    public static let maximumIACAValidity: Int64 = 20 * 365 * 86_400 + 5 * 86_400
    public static let maximumDocumentSignerValidity: Int64 = 457 * 86_400

    /// Unix-second bounds of a certificate's validity.
    public struct Validity: Equatable, Sendable {
        public var notBefore: Int64
        public var notAfter: Int64
        public init(notBefore: Int64, notAfter: Int64) {
            self.notBefore = notBefore
            self.notAfter = notAfter
        }
        var duration: Int64 { notAfter - notBefore }
    }

    /// A self-signed IACA root (Table B.1): subject = issuer with C (mandatory), ST (optional),
    /// O and CN; basicConstraints critical CA:TRUE pathLen 0 (only DS certificates below it);
    /// keyUsage critical keyCertSign + cRLSign; subjectKeyIdentifier; issuerAlternativeName
    /// (URI or email of the issuing authority); CRL distribution point.
    public static func makeIACA(
        key: PrivateKey, country: String, stateOrProvince: String? = nil, organization: String? = nil,
        commonName: String, issuerAltName: GeneralName, crlURL: String, validity: Validity
    ) throws(CertificateError) -> Certificate {
        guard validity.duration > 0, validity.duration <= maximumIACAValidity else {
            throw CertificateError(.invalidEncoding, "IACA validity must be at most 20 years")
        }
        let name = DistinguishedName(
            country: country, stateOrProvince: stateOrProvince, organization: organization, commonName: commonName)
        let builder = CertificateBuilder(
            subject: name, subjectKey: key.publicKey, notBefore: validity.notBefore, notAfter: validity.notAfter,
            extensions: [
                .basicConstraints(isCA: true, pathLength: 0),
                .keyUsage([.keyCertSign, .cRLSign]),
                .subjectKeyIdentifier,
                .issuerAlternativeName([issuerAltName]),
                .crlDistributionPoints([crlURL]),
            ])
        return try builder.selfSign(with: key)
    }

    /// A document signer certificate (Table B.3) for `subjectKey`, issued by `iaca`: C (and ST
    /// when the IACA has one) copied from the IACA, as Annex B requires them to match;
    /// authorityKeyIdentifier; subjectKeyIdentifier; keyUsage critical digitalSignature;
    /// extendedKeyUsage critical 1.0.18013.5.1.2; issuerAlternativeName; CRL distribution point;
    /// no basicConstraints. The validity must lie within the IACA's. It signs mdocs only; the
    /// issuer's other artifacts go under `makeCredentialSigner`.
    public static func makeDocumentSigner(
        subjectKey: PublicKey, iaca: Certificate, iacaKey: PrivateKey, organization: String? = nil,
        commonName: String, issuerAltName: GeneralName, subjectAltNames: [GeneralName] = [], crlURL: String, validity: Validity
    ) throws(CertificateError) -> Certificate {
        try makeIssuerCertificate(
            "document signer", subjectKey: subjectKey, iaca: iaca, iacaKey: iacaKey, organization: organization,
            commonName: commonName, issuerAltName: issuerAltName, subjectAltNames: subjectAltNames, crlURL: crlURL,
            validity: validity, extendedKeyUsage: [documentSignerEKU])
    }

    /// A certificate under `iaca` for what an issuer signs besides mdocs (SD-JWT VCs, status
    /// list tokens, signed metadata): the document signer profile WITHOUT the extendedKeyUsage
    /// 1.0.18013.5.1.2, so one key serves one use. An mdoc verifier refuses it as a document
    /// signer (Annex B, Table B.3, requires that EKU of a DS certificate), and the mdoc document
    /// signer signs nothing else. keyUsage critical digitalSignature; `subjectAltNames` carries
    /// the issuer's URL, which SD-JWT VC verifiers match against `iss` (SD-JWT VC, X.509 key
    /// discovery). Same validity limits as a document signer.
    public static func makeCredentialSigner(
        subjectKey: PublicKey, iaca: Certificate, iacaKey: PrivateKey, organization: String? = nil,
        commonName: String, issuerAltName: GeneralName, subjectAltNames: [GeneralName], crlURL: String, validity: Validity
    ) throws(CertificateError) -> Certificate {
        try makeIssuerCertificate(
            "credential signer", subjectKey: subjectKey, iaca: iaca, iacaKey: iacaKey, organization: organization,
            commonName: commonName, issuerAltName: issuerAltName, subjectAltNames: subjectAltNames, crlURL: crlURL,
            validity: validity, extendedKeyUsage: nil)
    }

    /// The Table B.3 profile both signers share, with the document signer's critical
    /// extendedKeyUsage when `extendedKeyUsage` is given.
    private static func makeIssuerCertificate(
        _ what: String, subjectKey: PublicKey, iaca: Certificate, iacaKey: PrivateKey, organization: String?,
        commonName: String, issuerAltName: GeneralName, subjectAltNames: [GeneralName], crlURL: String, validity: Validity,
        extendedKeyUsage: [String]?
    ) throws(CertificateError) -> Certificate {
        guard validity.duration > 0, validity.duration <= maximumDocumentSignerValidity else {
            throw CertificateError(.invalidEncoding, "\(what) validity must be at most 457 days")
        }
        guard validity.notBefore >= iaca.notBefore, validity.notAfter <= iaca.notAfter else {
            throw CertificateError(.invalidEncoding, "\(what) validity must lie within the IACA's")
        }
        let iacaName = iaca.subject
        guard let country = iacaName.country else { throw CertificateError(.invalidName, "IACA has no country") }
        let name = DistinguishedName(
            country: country, stateOrProvince: iacaName.stateOrProvince, organization: organization, commonName: commonName)
        var extensions: [CertificateExtension] = [.authorityKeyIdentifier, .subjectKeyIdentifier, .keyUsage([.digitalSignature])]
        if let extendedKeyUsage { extensions.append(.extendedKeyUsage(extendedKeyUsage, critical: true)) }
        extensions += [.issuerAlternativeName([issuerAltName]), .crlDistributionPoints([crlURL])]
        if !subjectAltNames.isEmpty { extensions.append(.subjectAlternativeName(subjectAltNames)) }
        let builder = CertificateBuilder(
            subject: name, subjectKey: subjectKey, notBefore: validity.notBefore, notAfter: validity.notAfter,
            extensions: extensions)
        return try builder.sign(issuer: iaca, key: iacaKey)
    }

    /// The IACA's CRL (Annex B CRL profile: v2, authorityKeyIdentifier, cRLNumber), listing
    /// `revoked` (none for a fresh issuer).
    public static func makeCRL(
        iaca: Certificate, iacaKey: PrivateKey, thisUpdate: Int64, nextUpdate: Int64, crlNumber: UInt64,
        revoked: [CRLBuilder.Entry] = []
    ) throws(CertificateError) -> CertificateRevocationList {
        try CRLBuilder(thisUpdate: thisUpdate, nextUpdate: nextUpdate, crlNumber: crlNumber, revoked: revoked)
            .sign(issuer: iaca, key: iacaKey)
    }
}
