import Cryptography
import JOSE
import SwiftASN1

/// Android Key Attestation (developer.android.com, "Verify hardware-backed key pairs with key
/// attestation"; source.android.com, "Key and ID attestation"): the certificate chain the
/// Keystore returns for the hardware key, leaf first, each entry base64 DER, checked as that
/// page says: the chain validates to one of Google's hardware attestation roots, the leaf
/// carries the KeyDescription extension with our challenge, the attestation security level is
/// TrustedEnvironment or StrongBox, and the leaf's key is the hardware key.
public struct AndroidKeyAttestation: Sendable {
    /// The KeyDescription extension.
    public static let extensionOID = "1.3.6.1.4.1.11129.2.1.17"
    /// Leaf, up to two intermediates for remotely provisioned keys, an attest-key certificate
    /// and the root fit well within this; longer chains are refused before any parsing.
    public static let maximumChainLength = 8

    public let roots: [Certificate]

    public init(roots: [Certificate]) {
        self.roots = roots
    }

    /// Verifies `chain` (base64 DER strings, leaf first) at `time` (Unix seconds).
    /// `challenges` gives the acceptable `attestationChallenge` values for the attested key
    /// (the client data hash depends on its thumbprint); `hardwareKey`, when the caller already
    /// knows the key, must be the attested one.
    public func verify(
        chain: [String], challenges: (JWK) -> [[UInt8]], hardwareKey: JWK? = nil, at time: Int64
    ) throws(DeviceAttestationError) -> AttestedDeviceKey {
        guard chain.count <= Self.maximumChainLength else {
            throw .invalid("certificate chain of \(chain.count) certificates; at most \(Self.maximumChainLength)")
        }
        var ders: [[UInt8]] = []
        for (index, entry) in chain.enumerated() {
            guard let der = DeviceCertificateChain.decodeBase64(entry) else {
                throw .invalid("certificate \(index) of the chain is not base64")
            }
            ders.append(der)
        }
        let certificates = try DeviceCertificateChain.verify(
            ders, roots: roots, at: time, maximumLength: Self.maximumChainLength
        )
        let leaf = certificates[0]
        // Only the attestation nearest the root can be trusted (developer.android.com, step 6):
        // a KeyDescription further up means someone extended the chain with a certificate of
        // their own, so exactly the leaf must carry one.
        for certificate in certificates.dropFirst() where certificate.extensionValue(oid: Self.extensionOID) != nil {
            throw .invalid("a certificate above the leaf carries a KeyDescription")
        }
        guard let extensionValue = leaf.extensionValue(oid: Self.extensionOID) else {
            throw .invalid("the leaf has no KeyDescription extension (\(Self.extensionOID))")
        }
        let description: KeyDescription
        do { description = try KeyDescription(der: extensionValue) } catch {
            throw .invalid("the KeyDescription extension is not valid DER of the schema: \(error)")
        }
        let (_, attestedKey) = try DeviceCertificateChain.publicKey(of: leaf)
        try DeviceCertificateChain.requireKey(attestedKey, equals: hardwareKey)
        guard challenges(attestedKey).contains(description.attestationChallenge) else {
            throw .invalid("attestationChallenge is not this registration's client data hash")
        }
        // attestationSecurityLevel says where the attestation was made, keyMintSecurityLevel
        // where the key lives; the weaker of the two is what the key can be trusted for.
        let level: SecurityLevel
        switch min(description.attestationSecurityLevel, description.keyMintSecurityLevel) {
        case 1: level = .tee
        case 2: level = .strongBox
        case 0: throw .integrity("the key is attested at the Software security level, not in secure hardware")
        default:
            throw .invalid("unknown security level \(description.attestationSecurityLevel)/\(description.keyMintSecurityLevel)")
        }
        // Only the hardware-enforced list speaks for the secure hardware.
        guard let rootOfTrust = description.hardwareEnforced.rootOfTrust else {
            throw .integrity("no hardware-enforced rootOfTrust")
        }
        guard rootOfTrust.verifiedBootState == 0, rootOfTrust.deviceLocked else {
            throw .integrity("verified boot state is \(rootOfTrust.bootStateName) with the bootloader \(rootOfTrust.deviceLocked ? "locked" : "unlocked")")
        }
        let list = description.hardwareEnforced
        let facts = DeviceFacts(
            model: list.model, os: list.osVersion.map(Self.osName), securityLevel: level, integrity: true
        )
        return AttestedDeviceKey(publicKey: attestedKey, facts: facts)
    }

    /// osVersion is MMmmss (e.g. 140000 for Android 14); 0 when the OS does not say.
    static func osName(_ version: Int) -> String {
        guard version > 0 else { return "Android" }
        let major = version / 10_000, minor = version / 100 % 100, patch = version % 100
        return "Android \(major).\(minor).\(patch)"
    }
}

/// The KeyDescription sequence (source.android.com, "Key attestation extension data schema"),
/// the fields this verifier reads. Versions 1 to 400 share this prefix.
struct KeyDescription {
    let attestationVersion: Int
    let attestationSecurityLevel: Int
    let keyMintSecurityLevel: Int
    let attestationChallenge: [UInt8]
    let softwareEnforced: AuthorizationList
    let hardwareEnforced: AuthorizationList

    init(der: [UInt8]) throws {
        let root = try DER.parse(der)
        self = try DER.sequence(root, identifier: .sequence) { nodes in
            let version = try Int(derEncoded: &nodes)
            let attestationLevel = try Int(derEncoded: &nodes, withIdentifier: .enumerated)
            _ = try Int(derEncoded: &nodes) // keyMintVersion (keymasterVersion before 100)
            let keyMintLevel = try Int(derEncoded: &nodes, withIdentifier: .enumerated)
            let challenge = try ASN1OctetString(derEncoded: &nodes)
            _ = try ASN1OctetString(derEncoded: &nodes) // uniqueId
            guard let software = nodes.next(), let hardware = nodes.next() else {
                throw ASN1Error.invalidASN1Object(reason: "KeyDescription lacks its authorization lists")
            }
            return KeyDescription(
                attestationVersion: version, attestationSecurityLevel: attestationLevel,
                keyMintSecurityLevel: keyMintLevel, attestationChallenge: Array(challenge.bytes),
                softwareEnforced: try AuthorizationList(software), hardwareEnforced: try AuthorizationList(hardware)
            )
        }
    }

    private init(
        attestationVersion: Int, attestationSecurityLevel: Int, keyMintSecurityLevel: Int,
        attestationChallenge: [UInt8], softwareEnforced: AuthorizationList, hardwareEnforced: AuthorizationList
    ) {
        self.attestationVersion = attestationVersion
        self.attestationSecurityLevel = attestationSecurityLevel
        self.keyMintSecurityLevel = keyMintSecurityLevel
        self.attestationChallenge = attestationChallenge
        self.softwareEnforced = softwareEnforced
        self.hardwareEnforced = hardwareEnforced
    }
}

/// An AuthorizationList: a SEQUENCE of optional fields, each EXPLICIT-tagged with its Keymaster
/// tag number. New Android versions add tags, so any field not read here is skipped (its
/// explicit wrapper is still required to hold exactly one element).
struct AuthorizationList {
    var rootOfTrust: RootOfTrust?
    var osVersion: Int?
    var model: String?

    static let rootOfTrustTag: UInt = 704
    static let osVersionTag: UInt = 705
    static let modelTag: UInt = 717

    init(_ node: ASN1Node) throws {
        try DER.sequence(node, identifier: .sequence) { nodes in
            // Not checked for ascending order: the schema lists tags in ascending order, but a
            // device writing them otherwise proves nothing false, and Google's parser takes them
            // in any order. A field twice is refused (no SEQUENCE component repeats).
            var seen: Set<UInt> = []
            while let field = nodes.next() {
                guard field.identifier.tagClass == .contextSpecific else {
                    throw ASN1Error.unexpectedFieldType(field.identifier)
                }
                let tag = field.identifier.tagNumber
                guard seen.insert(tag).inserted else {
                    throw ASN1Error.invalidASN1Object(reason: "authorization list has tag \(tag) twice")
                }
                try DER.explicitlyTagged(field, tagNumber: tag, tagClass: .contextSpecific) { inner in
                    switch tag {
                    case Self.rootOfTrustTag: rootOfTrust = try RootOfTrust(inner)
                    case Self.osVersionTag: osVersion = try Int(derEncoded: inner)
                    case Self.modelTag: model = String(decoding: try ASN1OctetString(derEncoded: inner).bytes, as: UTF8.self)
                    default: break
                    }
                }
            }
        }
    }
}

/// RootOfTrust ::= SEQUENCE { verifiedBootKey OCTET STRING, deviceLocked BOOLEAN,
/// verifiedBootState ENUMERATED { Verified(0), SelfSigned(1), Unverified(2), Failed(3) },
/// verifiedBootHash OCTET STRING (attestation version 3 and later) }.
struct RootOfTrust {
    let deviceLocked: Bool
    let verifiedBootState: Int

    init(_ node: ASN1Node) throws {
        (deviceLocked, verifiedBootState) = try DER.sequence(node, identifier: .sequence) { nodes in
            _ = try ASN1OctetString(derEncoded: &nodes)
            let locked = try Bool(derEncoded: &nodes)
            let state = try Int(derEncoded: &nodes, withIdentifier: .enumerated)
            let _: ASN1OctetString? = try DER.optionalImplicitlyTagged(&nodes) // verifiedBootHash
            return (locked, state)
        }
    }

    var bootStateName: String {
        switch verifiedBootState {
        case 0: return "Verified"
        case 1: return "SelfSigned"
        case 2: return "Unverified"
        case 3: return "Failed"
        default: return "unknown (\(verifiedBootState))"
        }
    }
}
