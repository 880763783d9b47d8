import Cryptography
import Foundation
import JOSE
import Support

/// The verifier's key material, in `Keys/<entity name>/verifier/`, created on first start and
/// never overwritten (issue 22, item 1):
/// - a root (`ca.pem`, served at `<rp>/verifier-ca.pem`) a wallet may pin for the `x509_*`
///   client identifier prefixes;
/// - the access certificate under it (`signer.pem`), whose key signs request objects, with the
///   host of the entity ID as its dNSName SAN (`x509_san_dns`) and the entity ID as a URI SAN;
///   its SHA-256 is the `x509_hash` client identifier. The same key is the `jwks` signing key
///   of the `openid_credential_verifier` metadata, so the `openid_federation` prefix signs with it too;
/// - a P-256 key the wallet encrypts `direct_post.jwt` responses to (ECDH-ES, HAIP).
public struct VerifierKeys: Sendable {
    public let ca: Certificate
    public let signingKey: PrivateKey
    public let signer: Certificate
    public let encryptionKey: PrivateKey
    /// `x5c` of request objects: the access certificate alone (HAIP: without the root).
    public let x5c: [String]
    /// base64url of SHA-256 over the access certificate's DER (OpenID4VP 1.0 §5.9.3, `x509_hash`).
    public let certificateHash: String
    /// The dNSName of the access certificate (`x509_san_dns`).
    public let dnsName: String
    /// The signing key's public JWK, `kid` = its RFC 7638 thumbprint.
    public let signingJWK: JWK
    /// The encryption key's public JWK (`use: enc`, `alg: ECDH-ES`), `kid` = its thumbprint.
    public let encryptionJWK: JWK

    public init(ca: Certificate, signingKey: PrivateKey, signer: Certificate, encryptionKey: PrivateKey, dnsName: String) {
        self.ca = ca
        self.signingKey = signingKey
        self.signer = signer
        self.encryptionKey = encryptionKey
        self.dnsName = dnsName
        x5c = Certificate.x5c([signer])
        certificateHash = Base64URL.encode(Digest.sha256(signer.der))
        let jwk = JWK(publicKey: signingKey.publicKey, algorithm: .ES256)
        signingJWK = jwk.adding(["kid": .string(jwk.thumbprint())])
        let enc = JWK(publicKey: encryptionKey.publicKey, use: "enc")
        encryptionJWK = enc.adding(["kid": .string(enc.thumbprint()), "alg": "ECDH-ES"])
    }

    /// Reads the verifier's files from `directory` (0700, files 0600), creating what is
    /// missing. The access certificate is replaced (new key, new certificate) within 30 days of
    /// its end, or when the entity ID's host changed (another `--base-url`).
    public static func loadOrCreate(directory: String, verifier: String, now: Int64) throws -> VerifierKeys {
        let files = KeyFolder(directory)
        try files.ensure()
        let host = (try? URIReference(parsing: verifier))?.normalizedHost ?? "localhost"
        // A bracketed IPv6 literal is not a DNS name; the brackets go.
        let dnsName = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        func newKey() throws -> PrivateKey { try PrivateKey(generatingFor: .ES256) }
        let caKey = try files.privateKey("ca.key.pem", make: newKey)
        let ca = try files.certificate("ca.pem") {
            try CertificateBuilder(
                subject: DistinguishedName(country: "NL", organization: "Trustbed", commonName: "Trustbed Verifier Root"),
                subjectKey: caKey.publicKey, notBefore: now - 3_600, notAfter: now + 10 * 365 * 86_400,
                extensions: [.basicConstraints(isCA: true, pathLength: 0), .keyUsage([.keyCertSign, .cRLSign]),
                             .subjectKeyIdentifier, .authorityKeyIdentifier]
            ).selfSign(with: caKey)
        }
        func makeSigner(_ key: PrivateKey) throws -> Certificate {
            try CertificateBuilder(
                subject: DistinguishedName(country: "NL", organization: "Trustbed", commonName: dnsName),
                subjectKey: key.publicKey, notBefore: now - 3_600, notAfter: min(now + 365 * 86_400, ca.notAfter),
                extensions: [.basicConstraints(isCA: false, pathLength: nil), .keyUsage([.digitalSignature]),
                             .subjectKeyIdentifier, .authorityKeyIdentifier,
                             .subjectAlternativeName([.dns(dnsName), .uri(verifier)])]
            ).sign(issuer: ca, key: caKey)
        }
        var signingKey = try files.privateKey("signer.key.pem", make: newKey)
        var signer = try files.certificate("signer.pem") { try makeSigner(signingKey) }
        if signer.notAfter - now < 30 * 86_400 || (try? signer.publicKey()) != signingKey.publicKey
            || signer.subjectAlternativeNames != [.dns(dnsName), .uri(verifier)] {
            signingKey = try newKey()
            signer = try makeSigner(signingKey)
            try files.replace("signer.key.pem", signingKey.pemPKCS8())
            try files.replace("signer.pem", signer.pem())
        }
        let encryptionKey = try files.privateKey("encryption.key.pem") { try PrivateKey(generatingECCurve: "P-256") }
        return VerifierKeys(ca: ca, signingKey: signingKey, signer: signer, encryptionKey: encryptionKey, dnsName: dnsName)
    }
}
