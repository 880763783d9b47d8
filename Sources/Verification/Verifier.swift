import Cryptography
import JOSE
import Logging
import Store
import Support

/// The mock verifier (issue 22): OpenID4VP 1.0 presentation requests by reference, signed
/// request objects for the `x509_hash`, `x509_san_dns` and `openid_federation` client
/// identifier prefixes, `direct_post` and `direct_post.jwt` responses, and the verification of
/// SD-JWT VC presentations check by check (`VerificationReport`). Shaped like `Issuance`:
/// domain folders by concern, the repository in `Store/Verification/`, and `Endpoints/` the
/// only part importing `HTTP`.
public final class Verifier: Sendable {
    /// The entity ID: the `openid_federation` client identifier and the base of its URLs.
    public let entityID: String
    public let entityName: String
    public let configuration: VerifierConfiguration
    public let keys: VerifierKeys
    public let urls: VerifierURLs
    public let database: Database
    public let clock: Clock
    public let logger: Logger
    /// Trust Anchors' entity IDs (names already resolved) an issuer's chain must reach.
    public let trustAnchors: [String]
    /// Roots an issuer's `x5c` may chain to (`issuer_roots`).
    public let issuerRoots: [Certificate]
    /// SHA-256 of the admin token (see `AdminAccess`).
    public let adminTokenDigest: [UInt8]
    /// The federation's answer about issuers; nil when the server runs none.
    public let issuerTrust: (any CredentialIssuerTrust)?
    public let statusLists: StatusListCache
    /// IACA roots of federation-trusted mdoc issuers; nil: only `issuerRoots`.
    public let iacas: (any IACAFetcher)?

    /// The verifier's trust chain to its Trust Anchor (the `trust_chain` header of
    /// `openid_federation` request objects), built in process by the composition root.
    let trustChainSource: (@Sendable () -> [String]?)?
    let trustChainCache = Locked<(chain: [String], until: Int64)?>(nil)
    /// mdoc document signers met before (see `DocumentSigners`).
    let documentSigners = DocumentSigners()

    public init(entityID: String, entityName: String, configuration: VerifierConfiguration, keys: VerifierKeys,
                database: Database, clock: Clock, logger: Logger = Logger(label: "verifier"), trustAnchors: [String],
                issuerRoots: [Certificate] = [], adminToken: String, issuerTrust: (any CredentialIssuerTrust)?,
                statusLists: any StatusListFetcher, iacas: (any IACAFetcher)? = nil, trustChain: (@Sendable () -> [String]?)? = nil) {
        self.entityID = entityID
        self.entityName = entityName
        self.configuration = configuration
        self.keys = keys
        urls = VerifierURLs(entityID: entityID)
        self.database = database
        self.clock = clock
        self.logger = logger
        self.trustAnchors = trustAnchors
        self.issuerRoots = issuerRoots
        adminTokenDigest = Digest.sha256(Array(adminToken.utf8))
        self.issuerTrust = issuerTrust
        self.statusLists = StatusListCache(fetcher: statusLists)
        self.iacas = iacas
        trustChainSource = trustChain
    }

    /// Whether the base URL is on this machine only (127.0.0.1, ::1, localhost): then the
    /// `/verify` pages are open, as `/offers/new` is; elsewhere they need the admin token.
    public var pagesNeedAdminToken: Bool {
        !((try? URIReference(parsing: entityID))?.hasLoopbackHost ?? false)
    }

    /// The `trust_chain` of `openid_federation` request objects: subject's entity configuration
    /// first, the Trust Anchor's last, reused until 60 s before its earliest statement expires.
    public func currentTrustChain(now: Int64) -> [String]? {
        if let cached = trustChainCache.withLock({ $0 }), cached.until > now + 60 { return cached.chain }
        guard let source = trustChainSource, let chain = source(), !chain.isEmpty else { return nil }
        let until = chain.compactMap { (try? JWS.parseClaims($0))?.claims["exp"]?.intValue }.min() ?? now + 300
        trustChainCache.withLock { $0 = (chain, until) }
        return chain
    }

    /// Forgets requests a day past their expiry.
    public func purgeExpired(now: Int64) throws -> Int {
        try PresentationRequestRepository(database: database).purge(now: now)
    }
}

/// The verifier's URLs, all under its entity ID.
public struct VerifierURLs: Sendable {
    public let entityID: String
    public init(entityID: String) { self.entityID = entityID }

    /// The request object by reference (OpenID4VP 1.0 §5.10, `request_uri`).
    public func request(_ id: String) -> String { entityID + "/request/" + id }
    /// Where wallets post responses (§8.2, `response_uri`).
    public var response: String { entityID + "/response" }
    public var ca: String { entityID + "/verifier-ca.pem" }
    public var adminRequests: String { entityID + "/admin/presentation-requests" }
    public func adminRequest(_ id: String) -> String { adminRequests + "/" + id }
    public var newPage: String { entityID + "/verify/new" }
    public func resultPage(_ id: String) -> String { entityID + "/verify/" + id }
}
