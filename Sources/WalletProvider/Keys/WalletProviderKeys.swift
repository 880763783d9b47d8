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
/// - the nonce secret (32 random bytes) behind every stateless nonce of `<wp>/nonce`;
/// - for NL accounts (issue 21): the wrapping key (`held-keys.key`, 32 random bytes, hex) under
///   which the keys the provider holds for accounts are stored (AES-256-GCM), and the key of
///   the recovery codes' HMACs (`recovery-code-hmac.key`), so the database alone reveals
///   neither keys nor codes.
public struct WalletProviderKeys: Sendable {
    public let ca: Certificate
    public let signingKey: PrivateKey
    public let signer: Certificate
    public let deviceMakerKey: PrivateKey
    public let deviceMakerRoot: Certificate
    public let nonceSecret: [UInt8]
    /// AES-256-GCM key wrapping the private keys held for NL accounts.
    public let wrappingKey: [UInt8]
    /// HMAC-SHA256 key of the stored recovery codes.
    public let recoveryCodeKey: [UInt8]
    /// `x5c` of every attestation this provider signs: the signing certificate alone.
    public let x5c: [String]
    /// The signing key's public JWK, `kid` = its RFC 7638 thumbprint.
    public let signingJWK: JWK

    public init(ca: Certificate, signingKey: PrivateKey, signer: Certificate, deviceMakerKey: PrivateKey,
                deviceMakerRoot: Certificate, nonceSecret: [UInt8], wrappingKey: [UInt8]? = nil, recoveryCodeKey: [UInt8]? = nil) {
        self.ca = ca
        // Tests that build keys in memory get keys derived from the nonce secret (HKDF, one
        // label each); `loadOrCreate` always reads or makes the files.
        self.wrappingKey = wrappingKey ?? Self.derived(nonceSecret, "trustbed wallet-provider held keys v1")
        self.recoveryCodeKey = recoveryCodeKey ?? Self.derived(nonceSecret, "trustbed wallet-provider recovery codes v1")
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
        func secretFile(_ name: String) throws -> [UInt8] {
            let hex = try files.text(name) { Hex.encode(SecureRandom.bytes(32)) + "\n" }
            guard let bytes = Hex.decode(hex.trimmingCharacters(in: .whitespacesAndNewlines)), bytes.count == 32 else {
                throw WalletProviderError(.serverError, "\(directory)/\(name) must hold 32 bytes as hex")
            }
            return bytes
        }
        return WalletProviderKeys(ca: ca, signingKey: signingKey, signer: signer, deviceMakerKey: deviceMakerKey,
                                  deviceMakerRoot: deviceMakerRoot, nonceSecret: secret, wrappingKey: try secretFile("held-keys.key"),
                                  recoveryCodeKey: try secretFile("recovery-code-hmac.key"))
    }

    private static func derived(_ secret: [UInt8], _ label: String) -> [UInt8] {
        (try? KeyDerivation.hkdf(.sha256, inputKeyMaterial: secret, info: Array(label.utf8), outputLength: 32))
            ?? Digest.sha256(secret + Array(label.utf8))
    }
}
