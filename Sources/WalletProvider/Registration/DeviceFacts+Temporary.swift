// TEMPORARY: a copy of `DeviceAttestation/DeviceFacts.swift`, which the device attestation
// verifiers' branch defines; deleted when that branch merges.

/// What a device key attestation says about the device.
public struct DeviceFacts: Sendable, Equatable {
    public enum SecurityLevel: String, Sendable, Equatable {
        case software, tee, strongBox, secureEnclave
    }

    public var model: String
    public var os: String
    public var securityLevel: SecurityLevel
    public var integrity: Bool

    public init(model: String, os: String, securityLevel: SecurityLevel, integrity: Bool) {
        self.model = model
        self.os = os
        self.securityLevel = securityLevel
        self.integrity = integrity
    }
}
