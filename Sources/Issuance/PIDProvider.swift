import Cryptography
import JOSE
import JSON
import Logging
import Store
import Support

/// One PID Provider: an OAuth 2.0 authorization server and an OpenID4VCI 1.0 credential
/// issuer for one entity. Holds what every part of the service reads; the parts (`OAuth/`,
/// `Credential/`, `Offers/`, `Status/`, ...) are extensions and small types around it, and
/// `Endpoints/` turns HTTP requests into calls on it.
public final class PIDProvider: Sendable {
    /// The credential issuer identifier = the authorization server's `issuer` = the entity ID.
    public let issuer: String
    /// The entity's file name (without `.json`): its `Keys/` folder.
    public let entityName: String
    public let configuration: IssuerConfiguration
    public let keys: IssuerKeys
    public let urls: IssuerURLs
    public let database: Database
    public let clock: Clock
    public let logger: Logger
    /// Trust Anchors' entity IDs for client attestations (names already resolved).
    public let trustAnchors: [String]
    /// Roots an attestation's `x5c` may chain to instead of a federation chain.
    public let attestationRoots: [Certificate]
    public let walletProviderTrust: WalletProviderTrust?
    /// The three above as one value: who may sign client and key attestations.
    public let attestationTrust: AttestationIssuerTrust
    /// `Authorization: Bearer <adminToken>` opens the admin API.
    public let adminToken: String
    /// SHA-256 of `adminToken`, what `authorizeAdmin` compares a presented token's digest with.
    let adminTokenDigest: [UInt8]
    /// The MAC key of stateless `DPoP-Nonce`s, derived once (see `dpopNonce()`), with its
    /// HMAC contexts kept (see `HMAC.SHA256Key`).
    let dpopNonceKey: HMAC.SHA256Key
    /// The `DPoP-Nonce` of the second it was made in (see `dpopNonce()`).
    let dpopNonceMemo = Locked<(time: Int64, nonce: String)?>(nil)
    /// The MAC key of stateless `c_nonce`s (see `issueCNonce()`).
    let cNonceKey: HMAC.SHA256Key
    /// Claims shared by the PIDs issued to one persona in one configuration on one day.
    let preparedClaims = PreparedClaimsCache()
    /// Entries taken in the status list that new credentials go to (see `allocateStatusEntries`).
    let statusFill = Locked<(uri: String, taken: Int)?>(nil)

    public init(issuer: String, entityName: String, configuration: IssuerConfiguration, keys: IssuerKeys, database: Database,
                clock: Clock, logger: Logger, trustAnchors: [String], attestationRoots: [Certificate],
                walletProviderTrust: WalletProviderTrust?, adminToken: String) {
        self.issuer = issuer
        self.entityName = entityName
        self.configuration = configuration
        self.keys = keys
        self.urls = IssuerURLs(issuer: issuer)
        self.database = database
        self.clock = clock
        self.logger = logger
        self.trustAnchors = trustAnchors
        self.attestationRoots = attestationRoots
        self.walletProviderTrust = walletProviderTrust
        attestationTrust = AttestationIssuerTrust(roots: attestationRoots, trustAnchors: trustAnchors, walletProviders: walletProviderTrust)
        self.adminToken = adminToken
        adminTokenDigest = Digest.sha256(Array(adminToken.utf8))
        dpopNonceKey = HMAC.SHA256Key(Self.nonceKey(issuer: issuer, recoverySecret: keys.recoverySecret, label: "trustbed DPoP-Nonce v1"))
        cNonceKey = HMAC.SHA256Key(Self.nonceKey(issuer: issuer, recoverySecret: keys.recoverySecret, label: "trustbed c_nonce v1"))
    }

    /// A fresh unguessable value (codes, tokens, nonces, ids): 32 random bytes, base64url.
    public static func randomToken(bytes: Int = 32) -> String { Base64URL.encode(SecureRandom.bytes(bytes)) }
}
