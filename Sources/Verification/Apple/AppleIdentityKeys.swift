import Cryptography

/// The merchant's identity encryption key and its certificate (what a merchant creates in
/// Apple's developer portal; here self-signed), in `Keys/<name>/verifier/apple/`. The
/// certificate is served at `<rp>/apple/encryption.pem` for the envelope maker: the app's
/// PassKit seals to it. A configured key (`services.verifier.apple.key`) replaces the generated
/// one; the certificate follows the key.
public struct AppleIdentityKeys: Sendable {
    public let key: PrivateKey
    public let certificate: Certificate

    public static func loadOrCreate(directory: String, configuredKey: PrivateKey?, merchantID: String, now: Int64) throws -> AppleIdentityKeys {
        let files = KeyFolder(directory)
        try files.ensure()
        let key: PrivateKey
        if let configuredKey {
            key = configuredKey
        } else {
            key = try files.privateKey("encryption.key.pem") { try PrivateKey(generatingECCurve: "P-256") }
        }
        guard key.ecCurve == "P-256" else { throw CryptoError.invalidKey("Apple's envelope (HPKE DHKEM(P-256)) needs a P-256 key") }
        func makeCertificate() throws -> Certificate {
            try CertificateBuilder(
                subject: DistinguishedName(country: "NL", organization: "Trustbed", commonName: "Merchant Identity Encryption: \(merchantID)"),
                subjectKey: key.publicKey, notBefore: now - 3_600, notAfter: now + 2 * 365 * 86_400,
                extensions: [.basicConstraints(isCA: false, pathLength: nil), .keyUsage([.keyAgreement]), .subjectKeyIdentifier]
            ).selfSign(with: key)
        }
        var certificate = try files.certificate("encryption.pem", make: makeCertificate)
        if (try? certificate.publicKey()) != key.publicKey || certificate.notAfter - now < 30 * 86_400 {
            certificate = try makeCertificate()
            try files.replace("encryption.pem", certificate.pem())
        }
        return AppleIdentityKeys(key: key, certificate: certificate)
    }
}
