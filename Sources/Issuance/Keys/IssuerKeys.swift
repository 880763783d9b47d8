import Cryptography
import Foundation
import JOSE
import MDoc
import SDJWT
import Support

/// The PID Provider's own key material, kept in `Keys/<entity name>/issuer/` and created on
/// first start, never overwritten:
/// - an IACA root (ISO 18013-5 Annex B) with its key and CRL, published for verifiers;
/// - a document signer certificate under it (critical EKU 1.0.18013.5.1.2), whose key signs
///   mdocs only;
/// - a credential signer certificate under the same IACA, without that EKU, whose key signs
///   SD-JWT VCs, status list tokens and signed metadata (`x5c` = [credential signer], HAIP:
///   without the root). One key per use: a verifier that trusts the IACA for mdocs cannot be
///   handed a JWT signer as a document signer, and the mdoc key signs no JWT. Same IACA, so
///   wallets and verifiers keep one trust anchor per issuer. Key folders from before this
///   split get the credential signer on their next start;
/// - a P-256 key for encrypted credential requests (`credential_request_encryption.jwks`);
/// - the recovery secret (32 random bytes) behind every `recovery_code`.
public struct IssuerKeys: Sendable {
    public let documentSignerKey: PrivateKey
    public let documentSigner: Certificate
    public let credentialSignerKey: PrivateKey
    public let credentialSigner: Certificate
    public let iaca: Certificate
    public let crl: CertificateRevocationList
    public let encryptionKey: PrivateKey
    public let recoverySecret: [UInt8]
    /// `x5c` of every JWT this issuer signs: the credential signer alone (HAIP: without the
    /// IACA root), encoded once instead of per credential.
    public let x5c: [String]
    /// The mdoc signer (document signer key and certificate), checked once here rather than
    /// per mdoc (`DocumentSigner.init` compares the certificate's public key with the key's).
    /// nil when the two do not match; issuing an mdoc then reports why.
    let mdocSigner: DocumentSigner?
    /// The SD-JWT VC signer (ES256, `x5c` = the credential signer), made once so its protected
    /// header is serialized and encoded once (see SDJWTIssuer.encodedHeader); each credential
    /// takes a copy with its own number of decoys.
    let sdJWTIssuer: SDJWTIssuer

    /// The credential signer's public JWK, with `kid` = its RFC 7638 thumbprint, for
    /// `/.well-known/jwt-vc-issuer` (the key of SD-JWT VCs).
    public var signingJWK: JWK {
        let jwk = JWK(publicKey: credentialSignerKey.publicKey, algorithm: .ES256)
        return jwk.adding(["kid": .string(jwk.thumbprint())])
    }

    /// The request-encryption JWK (`use: enc`, `alg: ECDH-ES`), `kid` = its thumbprint.
    public var encryptionJWK: JWK {
        let jwk = JWK(publicKey: encryptionKey.publicKey, use: "enc")
        return jwk.adding(["kid": .string(jwk.thumbprint()), "alg": "ECDH-ES"])
    }

    public init(documentSignerKey: PrivateKey, documentSigner: Certificate, credentialSignerKey: PrivateKey,
                credentialSigner: Certificate, iaca: Certificate, crl: CertificateRevocationList,
                encryptionKey: PrivateKey, recoverySecret: [UInt8]) {
        self.documentSignerKey = documentSignerKey
        self.documentSigner = documentSigner
        self.credentialSignerKey = credentialSignerKey
        self.credentialSigner = credentialSigner
        self.iaca = iaca
        self.crl = crl
        self.encryptionKey = encryptionKey
        self.recoverySecret = recoverySecret
        x5c = Certificate.x5c([credentialSigner])
        mdocSigner = try? DocumentSigner(key: documentSignerKey, certificateChain: [documentSigner])
        sdJWTIssuer = SDJWTIssuer(key: credentialSignerKey, algorithm: .ES256, x5c: x5c)
    }

    /// `mdocSigner`, or the error that kept it from being made.
    func documentSignerForMDoc() throws(MDocError) -> DocumentSigner {
        if let mdocSigner { return mdocSigner }
        return try DocumentSigner(key: documentSignerKey, certificateChain: [documentSigner])
    }

    /// Reads the issuer's files from `directory`, creating what is missing. A signer within 30
    /// days of its end is replaced (new key, new certificate) so a long-running demo never
    /// signs with an expired certificate; the CRL is re-issued when past `nextUpdate`.
    public static func loadOrCreate(directory: String, issuer: String, country: String, authority: String,
                                    now: Int64) throws -> IssuerKeys {
        let files = KeyFolder(directory)
        try files.ensure()
        let iacaKey = try files.privateKey("iaca.key.pem") { try PrivateKey(generatingFor: .ES256) }
        let iaca = try files.certificate("iaca.pem") {
            try AnnexB.makeIACA(key: iacaKey, country: country, organization: authority, commonName: "\(authority) IACA",
                                issuerAltName: .uri(issuer), crlURL: IssuerURLs(issuer: issuer).iacaCRL,
                                validity: .init(notBefore: now - 3_600, notAfter: now + 10 * 365 * 86_400))
        }
        let urls = IssuerURLs(issuer: issuer)
        let validity = AnnexB.Validity(notBefore: now - 3_600, notAfter: min(now + 365 * 86_400, iaca.notAfter))
        let (dsKey, ds) = try files.signer("document-signer", issuer: issuer, now: now) { key in
            try AnnexB.makeDocumentSigner(
                subjectKey: key.publicKey, iaca: iaca, iacaKey: iacaKey, organization: authority,
                commonName: "\(authority) Document Signer", issuerAltName: .uri(issuer), subjectAltNames: [.uri(issuer)],
                crlURL: urls.iacaCRL, validity: validity)
        }
        let (csKey, cs) = try files.signer("credential-signer", issuer: issuer, now: now) { key in
            try AnnexB.makeCredentialSigner(
                subjectKey: key.publicKey, iaca: iaca, iacaKey: iacaKey, organization: authority,
                commonName: "\(authority) Credential Signer", issuerAltName: .uri(issuer), subjectAltNames: [.uri(issuer)],
                crlURL: urls.iacaCRL, validity: validity)
        }
        var crl = try files.crl("iaca.crl.pem") {
            try AnnexB.makeCRL(iaca: iaca, iacaKey: iacaKey, thisUpdate: now, nextUpdate: now + 30 * 86_400, crlNumber: 1)
        }
        if let next = crl.nextUpdate, next <= now + 86_400 {
            crl = try AnnexB.makeCRL(iaca: iaca, iacaKey: iacaKey, thisUpdate: now, nextUpdate: now + 30 * 86_400,
                                     crlNumber: UInt64(now))
            try files.replace("iaca.crl.pem", crl.pem())
        }
        let encryptionKey = try files.privateKey("encryption.key.pem") { try PrivateKey(generatingECCurve: "P-256") }
        let secretHex = try files.text("recovery-secret") { Hex.encode(SecureRandom.bytes(32)) + "\n" }
        guard let secret = Hex.decode(secretHex.trimmingCharacters(in: .whitespacesAndNewlines)), secret.count >= 32 else {
            throw IssuanceError.serverError("\(directory)/recovery-secret must hold at least 32 bytes as hex")
        }
        return IssuerKeys(documentSignerKey: dsKey, documentSigner: ds, credentialSignerKey: csKey, credentialSigner: cs,
                          iaca: iaca, crl: crl, encryptionKey: encryptionKey, recoverySecret: secret)
    }
}

extension KeyFolder {
    /// A signing key and its certificate (`<name>.key.pem`, `<name>.pem`), made by `make` when
    /// missing. Replaced (new key, new certificate) within 30 days of the certificate's end, when
    /// the two do not match, or when the issuer's URL changed (another --base-url): SD-JWT VC
    /// verifiers match `iss` against the certificate's subjectAltName.
    func signer(_ name: String, issuer: String, now: Int64,
                make: (PrivateKey) throws -> Certificate) throws -> (PrivateKey, Certificate) {
        var key = try privateKey(name + ".key.pem") { try PrivateKey(generatingFor: .ES256) }
        var certificate = try self.certificate(name + ".pem") { try make(key) }
        if certificate.notAfter - now < 30 * 86_400 || (try? certificate.publicKey()) != key.publicKey
            || certificate.subjectAlternativeNames != [.uri(issuer)] {
            key = try PrivateKey(generatingFor: .ES256)
            certificate = try make(key)
            try replace(name + ".key.pem", key.pemPKCS8())
            try replace(name + ".pem", certificate.pem())
        }
        return (key, certificate)
    }
}
