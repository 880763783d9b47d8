import CBOR
import COSE
import Cryptography
import Foundation
import Support
import SwiftASN1

/// Device key attestations the CLI wallet makes itself for `trustbed wallet register --format
/// android | apple`, in the real shapes (docs/device-attestations.md) but under TEST roots of its
/// own: an Android Key Attestation chain (leaf with the KeyDescription extension, then the root)
/// and an Apple App Attest attestation object. A Wallet Provider accepts them only once the
/// roots' PEM files are in its `android_roots` / `apple_roots` (docs/cli.md). The roots and their
/// keys live in `test-roots/` beside the wallet file, created on first use and kept (0700
/// folder, 0600 files), so one provider configuration serves every later registration.
public struct TestDeviceAttestations {
    public let folder: String
    public let androidRoot: Certificate
    let androidRootKey: PrivateKey
    public let appleRoot: Certificate
    let appleRootKey: PrivateKey

    public static let androidRootFile = "android-root.pem"
    public static let appleRootFile = "apple-root.pem"
    /// The app id the CLI's App Attest objects name by default (team id + bundle id): list it in
    /// the provider's `apple_app_ids`.
    public static let defaultAppleAppID = "TRUSTBED01.eu.trustbed.cli-wallet"

    /// The roots in `<folder of walletPath>/test-roots/`, made when missing.
    public init(besideWallet walletPath: String, now: Int64 = Int64(Date().timeIntervalSince1970)) throws {
        let folder = URL(fileURLWithPath: walletPath).deletingLastPathComponent().appendingPathComponent("test-roots").path
        let files = KeyFolder(folder)
        try files.ensure()
        func root(_ name: String, _ commonName: String) throws -> (PrivateKey, Certificate) {
            let key = try files.privateKey(name + ".key.pem") { try PrivateKey(generatingFor: .ES256) }
            let certificate = try files.certificate(name + ".pem") {
                try CertificateBuilder(
                    subject: DistinguishedName(organization: "Trustbed CLI wallet (TEST ONLY)", commonName: commonName),
                    subjectKey: key.publicKey, notBefore: now - 3_600, notAfter: now + 10 * 365 * 86_400,
                    extensions: [.basicConstraints(isCA: true, pathLength: nil), .keyUsage([.keyCertSign, .cRLSign]),
                                 .subjectKeyIdentifier]
                ).selfSign(with: key)
            }
            return (key, certificate)
        }
        self.folder = folder
        (androidRootKey, androidRoot) = try root("android-root", "Trustbed Test Android Attestation Root")
        (appleRootKey, appleRoot) = try root("apple-root", "Trustbed Test App Attestation Root")
    }

    public var androidRootPath: String { folder + "/" + Self.androidRootFile }
    public var appleRootPath: String { folder + "/" + Self.appleRootFile }

    /// An Android Key Attestation chain for `hardwareKey` (base64 DER, leaf first, then the test
    /// root): the leaf carries KeyDescription (1.3.6.1.4.1.11129.2.1.17) with `challenge` as
    /// attestationChallenge, security level TrustedEnvironment (or StrongBox), and a
    /// hardware-enforced rootOfTrust of a locked, verified device.
    public func androidChain(hardwareKey: PublicKey, challenge: [UInt8], strongBox: Bool = false,
                             now: Int64 = Int64(Date().timeIntervalSince1970)) throws -> [String] {
        let level = strongBox ? 2 : 1
        let description = try Self.keyDescription(challenge: challenge, securityLevel: level)
        let leaf = try CertificateBuilder(
            subject: DistinguishedName(commonName: "Android Keystore Key"), subjectKey: hardwareKey,
            notBefore: now - 60, notAfter: now + 365 * 86_400,
            extensions: [.keyUsage([.digitalSignature]),
                         .arbitrary(oid: "1.3.6.1.4.1.11129.2.1.17", der: description, critical: false)]
        ).sign(issuer: androidRoot, key: androidRootKey)
        return [leaf.der, androidRoot.der].map { Data($0).base64EncodedString() }
    }

    /// KeyDescription (source.android.com, "Key attestation extension data schema"), version 200
    /// (KeyMint 2): the challenge, empty software-enforced list, and in the hardware-enforced one
    /// rootOfTrust [704] (verified boot, locked), osVersion [705] and model [717].
    static func keyDescription(challenge: [UInt8], securityLevel: Int) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { description in
            try description.serialize(200)                                              // attestationVersion
            try securityLevel.serialize(into: &description, withIdentifier: .enumerated)
            try description.serialize(200)                                              // keyMintVersion
            try securityLevel.serialize(into: &description, withIdentifier: .enumerated)
            try description.serialize(ASN1OctetString(contentBytes: ArraySlice(challenge)))
            try description.serialize(ASN1OctetString(contentBytes: []))              // uniqueId
            description.appendConstructedNode(identifier: .sequence) { _ in }           // softwareEnforced
            try description.appendConstructedNode(identifier: .sequence) { hardware in
                try hardware.serialize(explicitlyTaggedWithTagNumber: 704, tagClass: .contextSpecific) { tagged in
                    try tagged.appendConstructedNode(identifier: .sequence) { root in
                        try root.serialize(ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0xAB, count: 32))))
                        try root.serialize(true)                                         // deviceLocked
                        try 0.serialize(into: &root, withIdentifier: .enumerated)      // verifiedBootState Verified
                        try root.serialize(ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0xCD, count: 32))))
                    }
                }
                try hardware.serialize(explicitlyTaggedWithTagNumber: 705, tagClass: .contextSpecific) { tagged in
                    try tagged.serialize(140000)                                         // Android 14.0.0
                }
                try hardware.serialize(explicitlyTaggedWithTagNumber: 717, tagClass: .contextSpecific) { tagged in
                    try tagged.serialize(ASN1OctetString(contentBytes: ArraySlice(Array("Trustbed CLI test device".utf8))))
                }
            }
        }
        return serializer.serializedBytes
    }

    /// The App Attest key id of `hardwareKey`: SHA-256 of its uncompressed point, base64 (what
    /// `DCAppAttestService.generateKey` hands the app, and so the instance's `hardware_key_tag`).
    public static func appleKeyID(_ hardwareKey: HolderKey) throws -> String {
        Data(try Digest.sha256(uncompressedPoint(hardwareKey.privateKey.publicKey))).base64EncodedString()
    }

    static func uncompressedPoint(_ key: PublicKey) throws -> [UInt8] {
        guard case .ec(curve: "P-256", let x, let y) = key.components else { throw WalletError.usage("the hardware key must be P-256") }
        return [0x04] + x + y
    }

    /// An App Attest attestation object (base64url CBOR `{fmt: "apple-appattest", attStmt: {x5c:
    /// [credCert, test root], receipt}, authData}`) for `hardwareKey`, bound to `clientDataHash`:
    /// credCert's nonce extension (1.2.840.113635.100.8.2, SEQUENCE { [1] OCTET STRING }) is
    /// SHA-256(authData ‖ clientDataHash); authData has rpIdHash = SHA-256(appID), counter 0, the
    /// development aaguid `appattestdevelop` and the key id as credentialId.
    public func appleAttestation(hardwareKey: PublicKey, clientDataHash: [UInt8], appID: String = defaultAppleAppID,
                                 now: Int64 = Int64(Date().timeIntervalSince1970)) throws -> String {
        let point = try Self.uncompressedPoint(hardwareKey)
        let keyID = Digest.sha256(point)
        let coseKey = try COSEKey(publicKey: hardwareKey).cborValue.encoded()
        var authData = Digest.sha256(Array(appID.utf8))
        authData.append(0x40 | 0x01)                         // flags: attested credential data, user present
        authData += [0, 0, 0, 0]                              // signCount 0
        authData += Array("appattestdevelop".utf8)
        authData += [UInt8(keyID.count >> 8), UInt8(keyID.count & 0xFF)] + keyID + coseKey
        let nonce = Digest.sha256(authData + clientDataHash)
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { sequence in
            try sequence.serialize(explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific) { tagged in
                try tagged.serialize(ASN1OctetString(contentBytes: ArraySlice(nonce)))
            }
        }
        let credential = try CertificateBuilder(
            subject: DistinguishedName(commonName: "App Attest credential"), subjectKey: hardwareKey,
            notBefore: now - 60, notAfter: now + 30 * 86_400,
            extensions: [.keyUsage([.digitalSignature]),
                         .arbitrary(oid: "1.2.840.113635.100.8.2", der: serializer.serializedBytes, critical: false)]
        ).sign(issuer: appleRoot, key: appleRootKey)
        let object = CBORValue.map([
            CBORMapEntry(.text("fmt"), .text("apple-appattest")),
            CBORMapEntry(.text("attStmt"), .map([
                CBORMapEntry(.text("x5c"), .array([.bytes(credential.der), .bytes(appleRoot.der)])),
                CBORMapEntry(.text("receipt"), .bytes(Array("trustbed-cli-test-receipt".utf8))),
            ])),
            CBORMapEntry(.text("authData"), .bytes(authData)),
        ])
        return Base64URL.encode(object.encoded())
    }
}
