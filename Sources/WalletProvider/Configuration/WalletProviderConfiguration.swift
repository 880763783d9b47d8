import JSON

/// `services.wallet_provider` of an entity file (issue 20, item 1). Every member is optional,
/// so `"wallet_provider": {}` runs a working provider; unknown members are refused, as in every
/// other declaration, so a misspelt one is not silently ignored.
public struct WalletProviderConfiguration: Sendable, Equatable {
    /// How the `sub` of a wallet attestation (the OAuth `client_id` the wallet then uses) is
    /// chosen: the RFC 7638 thumbprint of its `cnf.jwk` (IT-Wallet), or one fixed string for
    /// every instance (HAIP's wallet-solution client id).
    public enum ClientID: Sendable, Equatable {
        case thumbprint
        case fixed(String)
    }

    /// Trust Anchors (entity names or IDs) the provider's chain is built to; empty: those its
    /// authority hints reach. Names are turned into IDs by the composition root.
    public var trustAnchors: [String] = []
    /// Seconds a wallet attestation is valid: 3600 by default, at most 86400 (IT-Wallet: a
    /// wallet attestation lives no longer than 24 hours).
    public var attestationLifetime: Int64 = 3_600
    /// Seconds a nonce of `<wp>/nonce` stays good.
    public var nonceLifetime: Int64 = 300
    /// The `aal` of wallet attestations and `aal_values_supported`.
    public var aal = "https://trust-list.eu/aal/high"
    public var clientID: ClientID = .thumbprint
    public var walletName = "Trustbed Test Wallet"
    public var walletLink: String?
    /// PEM files (relative to `Entities/`) with the roots Android key attestations and Apple App
    /// Attest attestations must chain to. Empty: the defaults shipped with the repository.
    public var androidRootFiles: [String] = []
    public var appleRootFiles: [String] = []
    /// `TEAMID.bundle.id` of the apps whose App Attest attestations are accepted.
    public var appleAppIDs: [String] = []
    /// Whether development key attestations (signed by this provider's mock device maker) are
    /// accepted, and `<wp>/dev/key-attestation` makes them.
    public var devAttestations = true
    /// NL accounts (issue 21): the provider holds the wallet's keys and acts on signed
    /// instructions (`<wp>/instructions/...`); registration then requires `pin_public_key`.
    public var remoteKeys = false
    /// Wrong PINs in a row after which an NL account is `blocked`.
    public var pinAttempts: Int64 = 4
    /// Recovery codes refused by `disclose_recovery_code` (e.g. a test persona's shared code).
    public var recoveryCodeDenyList: [String] = []
    /// Seconds a device transfer session lives before it becomes `cancelled`.
    public var transferLifetime: Int64 = 3_600
    /// Seconds an instruction challenge stays good.
    public var challengeLifetime: Int64 = 60
    /// PEM files (relative to `Entities/`) with roots a PID's `x5c` may chain to for
    /// `disclose_recovery_code`, beside the PID Providers the `trust_anchors` vouch for.
    public var pidIssuerRootFiles: [String] = []

    public init() {}

    public static let knownFields: Set<String> = [
        "trust_anchors", "attestation_lifetime", "nonce_lifetime", "aal", "client_id", "wallet_name", "wallet_link",
        "android_roots", "apple_roots", "apple_app_ids", "dev_attestations",
        "remote_keys", "pin_attempts", "recovery_code_deny_list", "transfer_lifetime", "challenge_lifetime",
        "pid_issuer_roots",
    ]
    public static let maxAttestationLifetime: Int64 = 86_400

    public static func parse(_ reader: JSONReader) throws(JSONReadError) -> WalletProviderConfiguration {
        try reader.rejectUnknown(allowed: knownFields)
        var c = WalletProviderConfiguration()
        if let v = try reader.optionalStringArray("trust_anchors") { c.trustAnchors = v }
        c.attestationLifetime = try positive(reader, "attestation_lifetime", default: c.attestationLifetime,
                                             max: maxAttestationLifetime)
        c.nonceLifetime = try positive(reader, "nonce_lifetime", default: c.nonceLifetime, max: 86_400)
        if let v = try reader.optionalField("aal")?.nonEmptyString() { c.aal = v }
        if let v = try reader.optionalString("client_id") {
            guard !v.isEmpty else { throw reader.invalid("client_id", "expected \"thumbprint\" or a fixed client id") }
            c.clientID = v == "thumbprint" ? .thumbprint : .fixed(v)
        }
        if let v = try reader.optionalField("wallet_name")?.nonEmptyString() { c.walletName = v }
        c.walletLink = try reader.optionalURL("wallet_link")
        if let v = try reader.optionalStringArray("android_roots") { c.androidRootFiles = v }
        if let v = try reader.optionalStringArray("apple_roots") { c.appleRootFiles = v }
        if let v = try reader.optionalStringArray("apple_app_ids") {
            for id in v where !isAppID(id) {
                throw reader.invalid("apple_app_ids", "\(id) is not TEAMID.bundle.id (a 10-character team id, a dot, a bundle id)")
            }
            c.appleAppIDs = v
        }
        if let v = try reader.optionalBool("dev_attestations") { c.devAttestations = v }
        if let v = try reader.optionalBool("remote_keys") { c.remoteKeys = v }
        c.pinAttempts = try positive(reader, "pin_attempts", default: c.pinAttempts, max: 100)
        if let v = try reader.optionalStringArray("recovery_code_deny_list") { c.recoveryCodeDenyList = v }
        c.transferLifetime = try positive(reader, "transfer_lifetime", default: c.transferLifetime, max: 7 * 86_400)
        c.challengeLifetime = try positive(reader, "challenge_lifetime", default: c.challengeLifetime, max: 3_600)
        if let v = try reader.optionalStringArray("pid_issuer_roots") { c.pidIssuerRootFiles = v }
        return c
    }

    /// Apple's app id: the 10-character team id, a dot, the bundle id.
    static func isAppID(_ id: String) -> Bool {
        let parts = id.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, parts[0].count == 10, parts[0].allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }) else {
            return false
        }
        return !parts[1].isEmpty && parts[1].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
    }

    private static func positive(_ reader: JSONReader, _ name: String, default value: Int64, max: Int64) throws(JSONReadError) -> Int64 {
        guard let v = try reader.optionalInt(name) else { return value }
        guard v > 0, v <= max else { throw reader.invalid(name, "expected a number between 1 and \(max)") }
        return v
    }
}
