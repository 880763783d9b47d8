import Support
import Cryptography
import Federation
import Foundation
import JOSE
import JSON
import Store

/// Keys held in memory: one ES256 key per entity, made on first use. Thread-safe, so hosts
/// serving concurrent requests can share it. `rotate` and `revoke` produce the historical keys
/// the historical keys endpoint publishes.
final class InMemoryKeys: KeyProvider, @unchecked Sendable {
    private struct Active {
        let signing: SigningKey
        let jwk: JWK
        let createdAt: Int64
    }

    private let lock = NSLock()
    private let clock: Clock
    private var active: [String: Active] = [:]
    /// Retired and revoked keys, oldest first, as published (with `kid`, `iat`, `exp`, `revoked`).
    private var retired: [String: [JWK]] = [:]
    /// Retired keys still published in `jwks` until their `exp` (see `rotate(_:publishedFor:)`).
    private var stillPublished: [String: [(jwk: JWK, until: Int64)]] = [:]

    init(clock: Clock) { self.clock = clock }

    func signingKey(for entityID: String) throws(FederationError) -> SigningKey {
        try current(entityID).signing
    }

    func publicKeys(for entityID: String) throws(FederationError) -> JWKSet {
        let key = try current(entityID)
        let now = clock.now()
        let grace = lock.withLock { stillPublished[entityID] ?? [] }.filter { $0.until > now }.map(\.jwk)
        return JWKSet(keys: [key.jwk] + grace)
    }

    func historicalKeys(for entityID: String) throws(FederationError) -> [JWK] {
        lock.withLock { retired[entityID] ?? [] }
    }

    /// Replaces the entity's key; the old one becomes historical with `exp` = now + `grace`,
    /// and stays in `jwks` until then. Returns the old key's `kid`.
    @discardableResult
    func rotate(_ entityID: String, publishedFor grace: Int64 = 0) throws -> String {
        let old = try current(entityID)
        let now = clock.now()
        let fresh = try Self.makeKey(createdAt: now)
        let historical = old.jwk.adding(["iat": .int(old.createdAt), "exp": .int(now + grace)])
        lock.withLock {
            active[entityID] = fresh
            retired[entityID, default: []].append(historical)
            if grace > 0 { stillPublished[entityID, default: []].append((old.jwk, now + grace)) }
        }
        return old.signing.kid
    }

    /// Marks a key revoked. Revoking the active key rotates first, so the entity keeps a key to sign with.
    func revoke(_ entityID: String, kid: String, reason: String) throws {
        if try current(entityID).signing.kid == kid { try rotate(entityID) }
        let now = clock.now()
        lock.withLock {
            guard var list = retired[entityID], let i = list.firstIndex(where: { $0.kid == kid }) else { return }
            list[i] = list[i].adding(["revoked": ["revoked_at": .int(now), "reason": .string(reason)]])
            retired[entityID] = list
            stillPublished[entityID]?.removeAll { $0.jwk.kid == kid }
        }
    }

    private func current(_ entityID: String) throws(FederationError) -> Active {
        lock.lock()
        defer { lock.unlock() }
        if let key = active[entityID] { return key }
        do {
            let key = try Self.makeKey(createdAt: clock.now())
            active[entityID] = key
            return key
        } catch {
            throw .serverError("key generation failed: \(error)")
        }
    }

    private static func makeKey(createdAt: Int64) throws -> Active {
        let privateKey = try PrivateKey(generatingFor: .ES256)
        let jwk = JWK(publicKey: privateKey.publicKey, algorithm: .ES256)
        guard let kid = jwk.kid else { throw FederationError.serverError("JWK without kid") }
        return Active(signing: SigningKey(privateKey: privateKey, algorithm: .ES256, kid: kid), jwk: jwk, createdAt: createdAt)
    }
}

/// A `StatementFetcher` that answers from in-process hosts instead of the network, so tests can
/// run federations spread over several hosts (or a client host that hosts nothing).
/// `<entity>/.well-known/openid-federation` and `<entity>/fetch?sub=…` are served by whichever
/// registered host hosts the entity; `override(url:body:)` serves a tampered document instead.
final class RoutingFetcher: StatementFetcher, @unchecked Sendable {
    private let lock = NSLock()
    // Strong, though each host also holds its fetcher: a test that keeps only a client host must
    // still reach the federation it resolves. The cycle lives as long as the test process.
    private var hosts: [FederationHost] = []
    private var overrides: [String: String] = [:]
    private var fetched: [String] = []

    init() {}

    func register(_ host: FederationHost) {
        lock.withLock { hosts.append(host) }
    }

    func override(url: String, body: String) {
        lock.withLock { overrides[url] = body }
    }

    /// Every URL asked for, in order.
    var requests: [String] { lock.withLock { fetched } }

    func get(_ url: String) throws(FederationError) -> String {
        let (live, body) = lock.withLock { () -> ([FederationHost], String?) in
            fetched.append(url)
            return (hosts, overrides[url])
        }
        if let body { return body }
        for host in live {
            for id in host.entities.keys {
                if url == id + "/.well-known/openid-federation" { return try host.entityConfiguration(of: id) }
                let fetchPrefix = id + "/fetch?"
                if url.hasPrefix(fetchPrefix), let sub = Self.queryValue("sub", in: String(url.dropFirst(fetchPrefix.count))) {
                    return try host.subordinateStatement(issuer: id, subject: sub)
                }
            }
        }
        throw .notFound("\(url) answered HTTP 404")
    }

    private static func queryValue(_ name: String, in query: String) -> String? {
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0] == name { return String(parts[1]).removingPercentEncoding }
        }
        return nil
    }
}

/// A small demo federation on `https://tb.example`:
///
///     ta (trust anchor; issues the basic trust mark to pid-provider)
///     ├── intermediate
///     │   └── pid-provider (openid_credential_issuer + oauth_authorization_server)
///     └── relying-party (openid_credential_verifier)
enum FederationFixture {
    static let base = "https://tb.example"
    static let trustAnchor = base + "/ta"
    static let intermediate = base + "/intermediate"
    static let pidProvider = base + "/pid-provider"
    static let relyingParty = base + "/relying-party"
    static let basicMark = base + "/marks/basic"

    /// The anchor's policy for credential issuers below it.
    static let credentialIssuerPolicy: JSONValue = [
        "openid_credential_issuer": [
            "display": ["default": [["name": "Trustbed PID Provider"]]],
        ],
    ]

    static func trustAnchorEntity(
        trustMarkIssuers: [String: [String]] = [basicMark: [trustAnchor]],
        trustMarkOwners: [String: String] = [:],
        trustMarksIssued: [TrustMarkIssuance] = [TrustMarkIssuance(trustMarkType: basicMark, subjects: [pidProvider])]
    ) -> HostedEntity {
        HostedEntity(
            name: "ta", entityID: trustAnchor, isTrustAnchor: true,
            metadata: ["federation_entity": ["organization_name": "Trustbed Trust Anchor"]],
            subordinateDefaults: SubordinatePolicy(metadataPolicy: credentialIssuerPolicy),
            trustMarkIssuers: trustMarkIssuers, trustMarkOwners: trustMarkOwners, trustMarksIssued: trustMarksIssued)
    }

    static func intermediateEntity(trustMarksIssued: [TrustMarkIssuance] = []) -> HostedEntity {
        HostedEntity(
            name: "intermediate", entityID: intermediate, authorityHints: [trustAnchor],
            metadata: ["federation_entity": ["organization_name": "Trustbed Intermediate"]],
            trustMarksIssued: trustMarksIssued)
    }

    static let pidProviderEntity = HostedEntity(
        name: "pid-provider", entityID: pidProvider, authorityHints: [intermediate],
        metadata: [
            "openid_credential_issuer": [
                "credential_issuer": .string(pidProvider),
                "credential_endpoint": .string(pidProvider + "/credential"),
                "authorization_servers": [.string(pidProvider)],
            ],
            "oauth_authorization_server": [
                "issuer": .string(pidProvider),
                "token_endpoint": .string(pidProvider + "/token"),
                "authorization_endpoint": .string(pidProvider + "/authorize"),
            ],
        ])

    static let relyingPartyEntity = HostedEntity(
        name: "relying-party", entityID: relyingParty, authorityHints: [trustAnchor],
        metadata: ["openid_credential_verifier": ["client_name": "Trustbed Relying Party"]])

    static func entities() -> [HostedEntity] {
        [trustAnchorEntity(), intermediateEntity(), pidProviderEntity, relyingPartyEntity]
    }

    /// The demo federation in one host with an in-memory database. Pass `entities` to vary it;
    /// `keys` to keep keys across hosts (as the server does when it replaces a host).
    static func demo(clock: Clock, entities: [HostedEntity]? = nil, keys: InMemoryKeys? = nil,
                     database: Database? = nil) throws -> (host: FederationHost, keys: InMemoryKeys, fetcher: RoutingFetcher) {
        let keys = keys ?? InMemoryKeys(clock: clock)
        let fetcher = RoutingFetcher()
        let host = FederationHost(entities: entities ?? self.entities(), keys: keys, clock: clock,
                                  database: try database ?? Database(path: ":memory:"), fetcher: fetcher)
        fetcher.register(host)
        return (host, keys, fetcher)
    }
}

/// Reading and forging JWTs in tests.
extension FederationFixture {
    /// The header and claims of a compact JWT, without verifying it.
    static func decode(_ jwt: String) throws -> (jws: JWS, claims: [String: JSONValue]) {
        let jws = try JWS.parse(jwt)
        return (jws, try jws.payload())
    }

    /// `jwt` with its payload changed and the original signature kept: a forgery.
    static func tampered(_ jwt: String, _ change: (inout [String: JSONValue]) -> Void) throws -> String {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
              var claims = try JSONValue.parse(payload).objectValue else { throw FederationError.invalidRequest("not a JWT") }
        change(&claims)
        return [parts[0], Base64URL.encode(JSONValue.object(claims).bytes), parts[2]].joined(separator: ".")
    }
}
