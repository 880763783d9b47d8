import Cryptography
import Foundation
import JOSE
import Support

/// The Wallet Provider's key material, in `Keys/<entity name>/wallet-provider/`, created on
/// first start and never overwritten (issue 20, item 1):
/// - a CA (`ca.pem`, served at `<wp>/ca.pem`) that wallets and relying parties may pin;
/// - a signing certificate under it (`signer.pem`), whose key signs wallet and key
///   attestations (`x5c` = [signer], without the CA, as HAIP asks of `x5c`);
/// - a mock device-maker root (`device-maker.pem`) and its key, which sign development key
///   attestations: the stand-in for Google's and Apple's attestation roots on emulators and
///   in the CLI wallet;
/// - the nonce secret (32 random bytes) behind every stateless nonce of `<wp>/nonce`.
public struct WalletProviderKeys: Sendable {
    public let ca: Certificate
    public let signingKey: PrivateKey
    public let signer: Certificate
    public let deviceMakerKey: PrivateKey
    public let deviceMakerRoot: Certificate
    public let nonceSecret: [UInt8]
    /// `x5c` of every attestation this provider signs: the signing certificate alone.
    public let x5c: [String]
    /// The signing key's public JWK, `kid` = its RFC 7638 thumbprint.
    public let signingJWK: JWK

    public init(ca: Certificate, signingKey: PrivateKey, signer: Certificate, deviceMakerKey: PrivateKey,
                deviceMakerRoot: Certificate, nonceSecret: [UInt8]) {
        self.ca = ca
        self.signingKey = signingKey
        self.signer = signer
        self.deviceMakerKey = deviceMakerKey
        self.deviceMakerRoot = deviceMakerRoot
        self.nonceSecret = nonceSecret
        x5c = Certificate.x5c([signer])
        let jwk = JWK(publicKey: signingKey.publicKey, algorithm: .ES256)
        signingJWK = jwk.adding(["kid": .string(jwk.thumbprint())])
    }

    /// Reads the provider's files from `directory` (created 0700, files 0600), creating what is
    /// missing. The signer is replaced (new key, new certificate) within 30 days of its end,
    /// so a long-running demo never signs with an expired certificate.
    public static func loadOrCreate(directory: String, provider: String, now: Int64) throws -> WalletProviderKeys {
        // `KeyFolder`: 0700 folder, 0600 files made once with O_EXCL (the loser of two starts
        // reads the winner's file), replacements by rename.
        let files = KeyFolder(directory)
        try files.ensure()
        func newKey() throws -> PrivateKey { try PrivateKey(generatingFor: .ES256) }
        let caKey = try files.privateKey("ca.key.pem", make: newKey)
        let ca = try files.certificate("ca.pem") {
            try CertificateBuilder(
                subject: DistinguishedName(country: "NL", organization: "Trustbed", commonName: "Trustbed Wallet Provider CA"),
                subjectKey: caKey.publicKey, notBefore: now - 3_600, notAfter: now + 10 * 365 * 86_400,
                extensions: [.basicConstraints(isCA: true, pathLength: 0), .keyUsage([.keyCertSign, .cRLSign]),
                             .subjectKeyIdentifier, .authorityKeyIdentifier, .subjectAlternativeName([.uri(provider)])]
            ).selfSign(with: caKey)
        }
        var signingKey = try files.privateKey("signer.key.pem", make: newKey)
        func makeSigner(_ key: PrivateKey) throws -> Certificate {
            try CertificateBuilder(
                subject: DistinguishedName(country: "NL", organization: "Trustbed", commonName: "Trustbed Wallet Provider"),
                subjectKey: key.publicKey, notBefore: now - 3_600, notAfter: min(now + 365 * 86_400, ca.notAfter),
                extensions: [.basicConstraints(isCA: false, pathLength: nil), .keyUsage([.digitalSignature]),
                             .subjectKeyIdentifier, .authorityKeyIdentifier, .subjectAlternativeName([.uri(provider)])]
            ).sign(issuer: ca, key: caKey)
        }
        var signer = try files.certificate("signer.pem") { try makeSigner(signingKey) }
        if signer.notAfter - now < 30 * 86_400 || (try? signer.publicKey()) != signingKey.publicKey {
            signingKey = try PrivateKey(generatingFor: .ES256)
            signer = try makeSigner(signingKey)
            try files.replace("signer.key.pem", signingKey.pemPKCS8())
            try files.replace("signer.pem", signer.pem())
        }
        let deviceMakerKey = try files.privateKey("device-maker.key.pem", make: newKey)
        let deviceMakerRoot = try files.certificate("device-maker.pem") {
            try CertificateBuilder(
                subject: DistinguishedName(organization: "Trustbed Mock Device Maker", commonName: "Trustbed Development Key Attestation Root"),
                subjectKey: deviceMakerKey.publicKey, notBefore: now - 3_600, notAfter: now + 10 * 365 * 86_400,
                extensions: [.basicConstraints(isCA: true, pathLength: nil), .keyUsage([.keyCertSign, .digitalSignature]),
                             .subjectKeyIdentifier, .authorityKeyIdentifier]
            ).selfSign(with: deviceMakerKey)
        }
        let secretHex = try files.text("nonce-secret") { Hex.encode(SecureRandom.bytes(32)) + "\n" }
        guard let secret = Hex.decode(secretHex.trimmingCharacters(in: .whitespacesAndNewlines)), secret.count >= 32 else {
            throw WalletProviderError(.serverError, "\(directory)/nonce-secret must hold at least 32 bytes as hex")
        }
        return WalletProviderKeys(ca: ca, signingKey: signingKey, signer: signer, deviceMakerKey: deviceMakerKey,
                                  deviceMakerRoot: deviceMakerRoot, nonceSecret: secret)
    }
}
