import Cryptography
import JOSE
import JSON
import Logging
import OAuth
import Store
import Support

/// The mock Wallet Provider (issue 20): wallet instance registration with a device key
/// attestation, wallet attestations (OAuth attestation-based client authentication) and key
/// attestations (OpenID4VCI 1.0 Appendix D) for the wallet's keys, and the instance lifecycle,
/// as the IT-Wallet specifications describe a Wallet Solution. Shaped like `Issuance`: domain
/// folders by concern, repositories in `Store/WalletProvider/`, and `Endpoints/` the only part
/// importing `HTTP`.
public enum WalletProviderModule {}

/// One Wallet Provider, on one entity. The parts (`Registration/`, `Metadata/`, ...) are
/// extensions and small types around it, and `Endpoints/` turns HTTP requests into calls on it.
public final class WalletProvider: Sendable {
    /// The entity ID: the `iss` of its attestations and the base of its URLs.
    public let entityID: String
    public let entityName: String
    public let configuration: WalletProviderConfiguration
    public let keys: WalletProviderKeys
    public let urls: WalletProviderURLs
    public let database: Database
    public let clock: Clock
    public let logger: Logger
    /// Trust Anchors' entity IDs (names already resolved).
    public let trustAnchors: [String]
    /// SHA-256 of the admin token (see `AdminAccess`).
    public let adminTokenDigest: [UInt8]
    /// Stateless nonces of `<wp>/nonce`, each spent by the request that uses it successfully.
    public let nonces: SingleUseNonces
    /// Verifiers by device key attestation format. The development one is built in (when
    /// `dev_attestations` is on); Android and Apple ones are handed in by the composition root.
    public let verifiers: [DeviceKeyAttestationFormat: any DeviceKeyAttestationVerifier]

    /// Issue 21, `disclose_recovery_code`: how a PID's issuer is trusted. `pidIssuerMetadata`
    /// answers an issuer's resolved federation metadata through the provider's Trust Anchors
    /// (in process for a Trust Anchor hosted here), nil without a federation; `pidIssuerRoots`
    /// are the roots (`pid_issuer_roots`) a PID's `x5c` may chain to instead.
    let pidIssuerMetadata: (@Sendable (String) throws -> [String: JSONValue])?
    public let pidIssuerRoots: [Certificate]

    /// The provider's trust chain to its Trust Anchor, built in process by the composition
    /// root (never over HTTP to this server); nil when there is none.
    let trustChainSource: (@Sendable () -> [String]?)?
    /// The last chain built and the earliest `exp` of its statements: reused until then.
    let trustChainCache = Locked<(chain: [String], until: Int64)?>(nil)

    /// The account keys' wrapping (issue 21), under this provider's wrapping key.
    public let heldKeys: HeldKeys

    /// The replay records' purpose of the registration nonces.
    public static let noncePurpose = "wallet-provider-nonce"

    public init(entityID: String, entityName: String, configuration: WalletProviderConfiguration, keys: WalletProviderKeys,
                database: Database, clock: Clock, logger: Logger = Logger(label: "wallet-provider"), trustAnchors: [String], adminToken: String,
                verifiers: [any DeviceKeyAttestationVerifier] = [], trustChain: (@Sendable () -> [String]?)? = nil,
                pidIssuerMetadata: (@Sendable (String) throws -> [String: JSONValue])? = nil, pidIssuerRoots: [Certificate] = []) {
        trustChainSource = trustChain
        self.pidIssuerMetadata = pidIssuerMetadata
        self.pidIssuerRoots = pidIssuerRoots
        self.entityID = entityID
        self.entityName = entityName
        self.configuration = configuration
        self.keys = keys
        self.urls = WalletProviderURLs(entityID: entityID)
        self.database = database
        self.clock = clock
        self.logger = logger
        self.trustAnchors = trustAnchors
        adminTokenDigest = Digest.sha256(Array(adminToken.utf8))
        heldKeys = HeldKeys(provider: entityID, wrappingKey: keys.wrappingKey)
        nonces = SingleUseNonces(issuer: entityID, secret: keys.nonceSecret, label: "trustbed wallet-provider nonce v1",
                                 purpose: Self.noncePurpose, lifetime: configuration.nonceLifetime, clock: clock,
                                 store: NonceRepository(database: database))
        var byFormat: [DeviceKeyAttestationFormat: any DeviceKeyAttestationVerifier] = [:]
        if configuration.devAttestations {
            byFormat[.dev] = DevelopmentKeyAttestation(roots: [keys.deviceMakerRoot])
        }
        for verifier in verifiers { byFormat[verifier.format] = verifier }
        self.verifiers = byFormat
    }

    /// Whether the base URL is on this machine only (127.0.0.1, ::1, localhost): then
    /// `<wp>/dev/key-attestation` is open, as `/offers/new` is, because only this machine can
    /// reach it; elsewhere it needs the admin token.
    public var devEndpointNeedsAdminToken: Bool {
        !((try? URIReference(parsing: entityID))?.hasLoopbackHost ?? false)
    }
}

extension WalletProvider {
    /// The `trust_chain` of wallet attestations: subject's entity configuration first, the
    /// Trust Anchor's last, reused until 60 s before its earliest statement expires.
    public func currentTrustChain(now: Int64) -> [String]? {
        if let cached = trustChainCache.withLock({ $0 }), cached.until > now + 60 { return cached.chain }
        guard let source = trustChainSource, let chain = source(), !chain.isEmpty else { return nil }
        let until = chain.compactMap { (try? JWS.parseClaims($0))?.claims["exp"]?.intValue }.min() ?? now + 300
        trustChainCache.withLock { $0 = (chain, until) }
        return chain
    }

    /// Forgets spent nonces past their lifetime (the shared replay records, paged; see
    /// `NonceRepository.purge`). Instances are kept until revoked or purged by an admin.
    public func purgeExpired(now: Int64) throws -> Int {
        // Not a purge, but the same tick: instances whose PIDs all expired are `operational` again.
        let settled = try WalletInstanceValidity(database: database).settle(provider: entityID, now: now)
        if !settled.isEmpty { logger.info("\(settled.count) wallet instance(s) on \(entityID) settled after PIDs expired") }
        try InstructionChallengeRepository(database: database).purge(now: now)
        // Device transfer sessions past transfer_lifetime become `cancelled` (sources active again).
        let expired = try transfers.expireDue(now: now)
        if expired > 0 { logger.info("\(expired) transfer session(s) on \(entityID) expired") }
        return try NonceRepository(database: database).purge(now: now)
    }
}

/// The provider's URLs, all under its entity ID.
public struct WalletProviderURLs: Sendable {
    public let entityID: String
    public init(entityID: String) { self.entityID = entityID }

    public var nonce: String { entityID + "/nonce" }
    public var token: String { entityID + "/token" }
    public var walletInstance: String { entityID + "/wallet-instance" }
    /// The `iss` of a wallet attestation request: `<wp>/instance/<thumbprint of its cnf.jwk>`.
    public func instance(_ thumbprint: String) -> String { entityID + "/instance/" + thumbprint }
    public var walletAttestations: String { entityID + "/wallet-attestations" }
    /// The `vct` of the SD-JWT VC wallet attestation.
    public var walletAttestationType: String { entityID + "/wallet-attestation" }
    public var devKeyAttestation: String { entityID + "/dev/key-attestation" }
    public var ca: String { entityID + "/ca.pem" }
    public var policy: String { entityID + "/policy" }
    public var terms: String { entityID + "/terms" }
    public var logo: String { entityID + "/logo.svg" }
    /// The HTML page of the instances with their revoke buttons.
    public var instancesPage: String { entityID + "/instances" }
    /// NL accounts (issue 21): `POST` a challenge, then `POST` an instruction by name.
    public var instructionChallenge: String { entityID + "/instructions/challenge" }
    public func instruction(_ name: String) -> String { entityID + "/instructions/" + name }
}
