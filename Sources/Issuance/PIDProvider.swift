import Cryptography
import JOSE
import JSON
import Logging
import OAuth
import Store
import Support

/// One PID Provider: an OpenID4VCI 1.0 credential issuer for one entity, on an OAuth 2.0
/// authorization server made of `OAuth`'s value types (built here from the issuer, the clock,
/// the keys, the configuration's lifetimes and the database's repositories). The parts
/// (`OAuth/`, `Credential/`, `Offers/`, `Status/`, ...) are extensions and small types around
/// it, and `Endpoints/` turns HTTP requests into calls on it.
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

    // The authorization server (see `OAuth`).
    /// DPoP proofs and stateless `DPoP-Nonce`s (MAC key derived from the recovery secret).
    public let dpop: DPoPVerifier
    /// Access tokens and the protected-resource check.
    public let accessTokens: AccessTokenService
    /// Stateless `c_nonce`s, each spent once (OpenID4VCI §7.2).
    public let cNonces: SingleUseNonces
    /// Client attestations and their PoPs at PAR and the token endpoint.
    public let clientAttestations: ClientAttestationVerifier
    /// Pushed authorization requests (RFC 9126).
    public let pushedRequests: PushedAuthorizationRequests
    /// Authorization codes.
    public let codes: AuthorizationCodes
    /// Which redirect URIs which client may use (`configuration.clients` are the registered ones).
    public let redirectURIRule: RedirectURIRule
    /// Told about credentials issued to attested keys (see `IssuedCredentialObserver`).
    public let credentialObserver: (any IssuedCredentialObserver)?

    /// Claims shared by the PIDs issued to one persona in one configuration on one day.
    let preparedClaims = PreparedClaimsCache()
    /// Entries taken in the status list that new credentials go to (see `allocateStatusEntries`).
    let statusFill = Locked<(uri: String, taken: Int)?>(nil)

    public init(issuer: String, entityName: String, configuration: IssuerConfiguration, keys: IssuerKeys, database: Database,
                clock: Clock, logger: Logger, trustAnchors: [String], attestationRoots: [Certificate],
                walletProviderTrust: WalletProviderTrust?, adminToken: String, credentialObserver: (any IssuedCredentialObserver)? = nil) {
        self.credentialObserver = credentialObserver
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

        let replayStore = NonceRepository(database: database)
        dpop = DPoPVerifier(
            issuer: issuer, proofWindow: configuration.proofWindow, clock: clock,
            nonces: DPoPNonces(issuer: issuer, secret: keys.recoverySecret, label: "trustbed DPoP-Nonce v1",
                               lifetime: configuration.nonceLifetime, clock: clock),
            replayStore: replayStore)
        accessTokens = AccessTokenService(issuer: issuer, lifetime: configuration.tokenLifetime, requireDPoP: configuration.requireDPoP,
                                          clock: clock, store: TokenRepository(database: database), dpop: dpop)
        cNonces = SingleUseNonces(issuer: issuer, secret: keys.recoverySecret, label: "trustbed c_nonce v1",
                                  purpose: Self.cNoncePurpose, lifetime: configuration.nonceLifetime, clock: clock,
                                  store: replayStore)
        clientAttestations = ClientAttestationVerifier(
            issuer: issuer, trust: attestationTrust, requireAttestation: configuration.requireClientAttestation,
            proofWindow: configuration.proofWindow, clock: clock, replayStore: replayStore)
        pushedRequests = PushedAuthorizationRequests(issuer: issuer, lifetime: configuration.requestURILifetime, clock: clock,
                                                     store: AuthorizationRequestRepository(database: database))
        codes = AuthorizationCodes(issuer: issuer, lifetime: configuration.codeLifetime, clock: clock,
                                   store: CodeRepository(database: database))
        redirectURIRule = RedirectURIRule(clients: configuration.clients)
    }

    /// A fresh unguessable value (codes, tokens, nonces, ids): 32 random bytes, base64url.
    public static func randomToken(bytes: Int = 32) -> String { OAuthIdentifiers.random(bytes: bytes) }

    /// A fresh unguessable value in creation order (see `OAuthIdentifiers.ordered`).
    static func orderedToken(bytes: Int = 32, milliseconds: UInt64 = OrderedIdentifier.wallClockMilliseconds()) -> String {
        OAuthIdentifiers.ordered(bytes: bytes, milliseconds: milliseconds)
    }

    static func hasOrderedPrefix(_ text: some StringProtocol, length: Int) -> Bool {
        OAuthIdentifiers.hasOrderedPrefix(text, length: length)
    }
}
