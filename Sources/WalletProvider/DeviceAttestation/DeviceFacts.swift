import JOSE

/// Where a device keeps the hardware key, as its key attestation proves it.
public enum SecurityLevel: String, Sendable, Equatable, CaseIterable {
    /// Android's Software level: the key lives in the OS, so nothing was proven about the device.
    case software
    /// Android's TrustedEnvironment (a TEE).
    case tee
    /// Android's StrongBox (a separate secure element).
    case strongBox = "strongbox"
    /// Apple's Secure Enclave, which every App Attest key lives in.
    case secureEnclave = "secure_enclave"

    /// The OpenID4VCI 1.0 Appendix D.2 `key_storage` value (ISO 18045 attack potential
    /// resistance) a key attestation about this device states, or nil when nothing can be
    /// claimed (a software key). Development attestations claim `iso_18045_basic`; they are not
    /// built here (see the development format).
    public var keyStorage: String? {
        switch self {
        case .software: return nil
        case .tee: return "iso_18045_moderate"
        case .strongBox, .secureEnclave: return "iso_18045_high"
        }
    }
}

/// What a verified device key attestation says about the device: kept with the instance and
/// used for the `key_storage` of later key attestations (item 7).
public struct DeviceFacts: Sendable, Equatable {
    public var model: String?
    public var os: String?
    public var securityLevel: SecurityLevel
    /// Whether the device passed its integrity checks. The Android and Apple verifiers refuse a
    /// failing device outright (`DeviceAttestationError.integrity`), so their facts say true.
    public var integrity: Bool

    public init(model: String?, os: String?, securityLevel: SecurityLevel, integrity: Bool) {
        self.model = model
        self.os = os
        self.securityLevel = securityLevel
        self.integrity = integrity
    }
}

/// A device key attestation that verified: the hardware public key it attests (registration
/// stores it; the request itself carries no key) and the device facts.
public struct AttestedDeviceKey: Sendable, Equatable {
    public let publicKey: JWK
    public let facts: DeviceFacts

    public init(publicKey: JWK, facts: DeviceFacts) {
        self.publicKey = publicKey
        self.facts = facts
    }
}

/// Why a device key attestation was refused. Registration (issue 20 item 4) answers a bad
/// attestation (unreadable, badly signed, off its roots, not bound to the nonce, tag and key)
/// with 403 `invalid_request`, and a device failing integrity with 403 `integrity_check_error`.
public struct DeviceAttestationError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// The attestation is malformed, off its roots or bound to something else.
        case invalidAttestation
        /// The attestation is genuine but the device fails integrity (e.g. an Android key at
        /// the Software level, or an unverified boot).
        case integrity
    }

    public let kind: Kind
    public let reason: String

    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    static func invalid(_ reason: String) -> DeviceAttestationError { DeviceAttestationError(.invalidAttestation, reason) }
    static func integrity(_ reason: String) -> DeviceAttestationError { DeviceAttestationError(.integrity, reason) }

    public var isIntegrityFailure: Bool { kind == .integrity }

    /// The registration endpoint's error code for this refusal.
    public var errorCode: String { kind == .integrity ? "integrity_check_error" : "invalid_request" }

    public var description: String { "\(errorCode): \(reason)" }
}
