import CBOR
import Cryptography
import JOSE
import Support
import SwiftASN1

/// Apple App Attest attestation objects, verified by the steps of Apple's "Validating apps that
/// connect to your server" (DeviceCheck documentation, "Verify the attestation"). The object is
/// CBOR `{fmt: "apple-appattest", attStmt: {x5c: [credCert, intermediate], receipt}, authData}`,
/// sent base64url-encoded. The receipt is for Apple's fraud-metric service and is not checked.
public struct AppleAppAttest: Sendable {
    /// The credCert extension holding the nonce.
    public static let nonceExtensionOID = "1.2.840.113635.100.8.2"
    /// Apple sends the credential certificate and one intermediate.
    public static let maximumChainLength = 3
    /// Attestation objects are a few KB; anything much larger is refused before decoding.
    public static let maximumSize = 64 * 1024
    /// authData's aaguid: the development and the production App Attest environments.
    static let developmentAAGUID = Array("appattestdevelop".utf8)
    static let productionAAGUID = Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)

    public let roots: [Certificate]
    /// App identifiers `TEAMID.bundle.id`; authData's rpIdHash must be the SHA-256 of one.
    public let appIDs: [String]

    public init(roots: [Certificate], appIDs: [String]) {
        self.roots = roots
        self.appIDs = appIDs
    }

    /// Verifies `attestation` (base64url CBOR) for the key id `hardwareKeyTag` (the base64 key
    /// identifier the app got from `generateKey`) at `time` (Unix seconds). `clientDataHashes`
    /// gives the acceptable clientDataHash values for the attested key (the app passed one to
    /// `attestKey`); `hardwareKey`, when known, must be the attested key.
    public func verify(
        attestation: String, hardwareKeyTag: String, clientDataHashes: (JWK) -> [[UInt8]],
        hardwareKey: JWK? = nil, at time: Int64
    ) throws(DeviceAttestationError) -> AttestedDeviceKey {
        guard attestation.utf8.count <= Self.maximumSize * 4 / 3 + 4 else { throw .invalid("attestation object too large") }
        guard let bytes = Base64URL.decode(attestation) else { throw .invalid("attestation object is not base64url") }
        let object = try AttestationObject(cbor: bytes)
        guard let keyID = DeviceCertificateChain.decodeBase64(hardwareKeyTag), keyID.count == 32 else {
            throw .invalid("hardware_key_tag is not the base64 of a 32-byte App Attest key id")
        }

        // 1. The certificates chain to Apple's App Attest root.
        let chain = try DeviceCertificateChain.verify(
            object.x5c, roots: roots, at: time, maximumLength: Self.maximumChainLength
        )
        let credential = chain[0]
        let (publicKey, attestedKey) = try DeviceCertificateChain.publicKey(of: credential)
        try DeviceCertificateChain.requireKey(attestedKey, equals: hardwareKey)

        // 2-4. nonce = SHA-256(authData ‖ clientDataHash) is the credCert's extension value.
        guard let extensionValue = credential.extensionValue(oid: Self.nonceExtensionOID) else {
            throw .invalid("credCert has no nonce extension (\(Self.nonceExtensionOID))")
        }
        let nonce: [UInt8]
        do { nonce = try Self.nonce(fromExtension: extensionValue) } catch {
            throw .invalid("the nonce extension is not SEQUENCE { [1] OCTET STRING }: \(error)")
        }
        let matches = clientDataHashes(attestedKey).contains { hash in
            ConstantTime.equal(Digest.sha256(object.authData + hash), nonce)
        }
        guard matches else { throw .invalid("the nonce does not bind this registration's client data hash") }

        // 5. The key identifier is the SHA-256 of the credCert's public key (the uncompressed point).
        guard case .ec(curve: "P-256", let x, let y) = publicKey.components else {
            throw .invalid("credCert's key is not a P-256 key")
        }
        guard Digest.sha256([0x04] + x + y) == keyID else {
            throw .invalid("hardware_key_tag is not the key id of the attested key")
        }

        // 6-9. The authenticator data.
        let data = try AuthenticatorData(object.authData)
        guard appIDs.contains(where: { Digest.sha256(Array($0.utf8)) == data.rpIDHash }) else {
            throw .invalid("rpIdHash is not the SHA-256 of a configured app id")
        }
        guard data.counter == 0 else { throw .invalid("counter is \(data.counter), not 0") }
        guard data.aaguid == Self.developmentAAGUID || data.aaguid == Self.productionAAGUID else {
            throw .invalid("aaguid is neither appattestdevelop nor appattest")
        }
        guard data.credentialID == keyID else { throw .invalid("credentialId is not the key id") }

        return AttestedDeviceKey(
            publicKey: attestedKey, facts: DeviceFacts(model: nil, os: nil, securityLevel: .secureEnclave, integrity: true)
        )
    }

    /// The extension's value: SEQUENCE { [1] EXPLICIT OCTET STRING }.
    static func nonce(fromExtension der: [UInt8]) throws -> [UInt8] {
        try DER.sequence(try DER.parse(der), identifier: .sequence) { nodes in
            try DER.explicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) { node in
                Array(try ASN1OctetString(derEncoded: node).bytes)
            }
        }
    }
}

/// The CBOR attestation object, decoded once into typed members.
struct AttestationObject {
    let x5c: [[UInt8]]
    let authData: [UInt8]

    init(cbor bytes: [UInt8]) throws(DeviceAttestationError) {
        let value: CBORValue
        do { value = try CBORValue.decode(bytes) } catch {
            throw .invalid("attestation object is not CBOR: \(error)")
        }
        guard value.mapValue != nil else { throw .invalid("attestation object is not a CBOR map") }
        guard value["fmt"]?.textValue == "apple-appattest" else { throw .invalid("fmt is not apple-appattest") }
        guard let statement = value["attStmt"], statement.mapValue != nil else { throw .invalid("attStmt is missing or not a map") }
        guard let entries = statement["x5c"]?.arrayValue, !entries.isEmpty else { throw .invalid("attStmt.x5c is missing or empty") }
        var x5c: [[UInt8]] = []
        for entry in entries {
            guard let der = entry.bytesValue else { throw .invalid("attStmt.x5c holds a non-byte-string") }
            x5c.append(der)
        }
        guard statement["receipt"]?.bytesValue != nil else { throw .invalid("attStmt.receipt is missing or not a byte string") }
        guard let authData = value["authData"]?.bytesValue else { throw .invalid("authData is missing or not a byte string") }
        self.x5c = x5c
        self.authData = authData
    }
}

/// WebAuthn authenticator data (WebAuthn Level 2 §6.1) as App Attest fills it: rpIdHash (32),
/// flags (1), signCount (4, big-endian), then attested credential data: aaguid (16),
/// credentialIdLength (2), credentialId, and the credential public key (not read: the
/// credCert carries the same key).
struct AuthenticatorData {
    let rpIDHash: [UInt8]
    let counter: UInt32
    let aaguid: [UInt8]
    let credentialID: [UInt8]

    init(_ bytes: [UInt8]) throws(DeviceAttestationError) {
        guard bytes.count >= 55 else { throw .invalid("authData is \(bytes.count) bytes, too short for attested credential data") }
        rpIDHash = Array(bytes[0 ..< 32])
        counter = bytes[33 ..< 37].reduce(0) { $0 << 8 | UInt32($1) }
        aaguid = Array(bytes[37 ..< 53])
        let length = Int(bytes[53]) << 8 | Int(bytes[54])
        guard bytes.count >= 55 + length else { throw .invalid("authData's credentialId runs past its end") }
        credentialID = Array(bytes[55 ..< 55 + length])
    }
}
