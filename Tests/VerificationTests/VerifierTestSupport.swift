import Cryptography
import Foundation
import JOSE
import JSON
import SDJWT
import StatusList
import Store
import Support
@testable import Verification

/// An issuer the tests trust through a stand-in federation: its key, and SD-JWT VCs it issues.
struct TestIssuer {
    static let id = "https://issuer.example.org"
    static let statusURI = id + "/status/1"
    let key: PrivateKey
    var jwk: JWK { let j = JWK(publicKey: key.publicKey, algorithm: .ES256); return j.adding(["kid": .string(j.thumbprint())]) }

    init() throws { key = try PrivateKey(generatingFor: .ES256) }

    /// A PID-like SD-JWT VC bound to `holder`, with a status entry at `statusIndex`.
    func issue(holder: PrivateKey, now: Int64, statusIndex: Int = 3, vct: String = "urn:eudi:pid:1") throws -> SDJWT {
        let claims: [String: JSONValue] = [
            "iss": .string(Self.id), "iat": .int(now), "exp": .int(now + 86_400), "vct": .string(vct),
            "cnf": ["jwk": JWK(publicKey: holder.publicKey).jsonValue],
            "status": StatusReference(index: statusIndex, uri: Self.statusURI).claim,
            "given_name": "Erika", "family_name": "Mustermann", "birthdate": "1964-08-12",
            "address": ["country": "DE", "locality": "Berlin"],
            "nationalities": ["DE"],
        ]
        let plan = DisclosurePlan.object([
            "given_name": .disclosable, "family_name": .disclosable, "birthdate": .disclosable,
            "address": .disclosable(.object(["country": .disclosable, "locality": .disclosable])),
            "nationalities": .disclosable(.array(.disclosable)),
        ])
        return try SDJWTIssuer(key: key, algorithm: .ES256).issue(claims: claims, plan: plan)
    }

    /// A Status List Token of this issuer with `revoked` set to INVALID.
    func statusListToken(revoked: Set<Int> = [], now: Int64, ttl: Int64 = 60) throws -> String {
        var list = try StatusList(bits: 2, size: 64)
        for index in revoked { try list.setStatus(StatusType(rawValue: 1), at: index) }
        return try StatusListToken(subject: Self.statusURI, issuedAt: now, expiresAt: now + 3_600, timeToLive: ttl, list: list)
            .sign(key: key, algorithm: .ES256, keyID: nil)
    }
}

/// The federation's answer, canned: the test issuer is trusted with its jwks unless `refuse`.
struct StubIssuerTrust: CredentialIssuerTrust {
    let issuer: TestIssuer
    var refuse = false

    struct Refused: Error, CustomStringConvertible { var description: String { "no trust chain (stub)" } }

    func resolvedMetadata(entityID: String, trustAnchors: [String]) throws -> (metadata: [String: JSONValue], trustAnchor: String) {
        guard !refuse, entityID == TestIssuer.id else { throw Refused() }
        return (["openid_credential_issuer": ["jwks": ["keys": [issuer.jwk.jsonValue]]]], "https://ta.example.org")
    }
}

/// Status list tokens made on demand, counting fetches (to see the cache at work).
final class StubStatusLists: StatusListFetcher, @unchecked Sendable {
    let issuer: TestIssuer
    let clock: ManualClock
    let revoked = Locked<Set<Int>>([])
    let fetches = Locked(0)

    init(issuer: TestIssuer, clock: ManualClock) {
        self.issuer = issuer
        self.clock = clock
    }

    func statusListToken(uri: String) throws -> String {
        fetches.withLock { $0 += 1 }
        return try issuer.statusListToken(revoked: revoked.current, now: clock.now())
    }
}

struct VerifierFixture {
    static let entityID = "https://rp.example.org/relying-party"
    let verifier: Verifier
    let clock: ManualClock
    let issuer: TestIssuer
    let statusLists: StubStatusLists

    static func make(configuration: VerifierConfiguration = VerifierConfiguration(), refuseIssuer: Bool = false,
                     issuerRoots: [Certificate] = []) throws -> VerifierFixture {
        let directory = NSTemporaryDirectory() + "verifier-tests-\(UUID().uuidString)"
        let clock = ManualClock(1_800_000_000)
        let issuer = try TestIssuer()
        let statusLists = StubStatusLists(issuer: issuer, clock: clock)
        let keys = try VerifierKeys.loadOrCreate(directory: directory, verifier: entityID, now: clock.now())
        let verifier = Verifier(
            entityID: entityID, entityName: "relying-party", configuration: configuration, keys: keys,
            database: try Database(path: ":memory:"), clock: clock, trustAnchors: [], issuerRoots: issuerRoots, adminToken: "admin-secret",
            issuerTrust: StubIssuerTrust(issuer: issuer, refuse: refuseIssuer), statusLists: statusLists,
            trustChain: { ["ec-of-rp", "ec-of-ta"] })
        return VerifierFixture(verifier: verifier, clock: clock, issuer: issuer, statusLists: statusLists)
    }

    /// A pending request for `template`.
    func request(_ template: DCQLTemplate = .nameAndBirthDate, mode: ResponseMode = .directPost,
                 prefix: ClientIDPrefix = .x509Hash, redirectURI: String? = nil) throws -> PresentationRequestRecord {
        try verifier.createRequest(PresentationRequestOptions(query: DCQLQuery.parse(template.query), clientIDPrefix: prefix,
                                                              responseMode: mode, redirectURI: redirectURI))
    }

    /// The holder's presentation of `credential` with the disclosures named in `names` and a KB-JWT.
    func present(_ credential: SDJWT, holder: PrivateKey, names: Set<String>, audience: String, nonce: String) throws -> String {
        let chosen = credential.disclosures.filter { $0.name.map(names.contains) ?? false }
        return try SDJWT(issuerJWT: credential.issuerJWT, disclosures: chosen, keyBindingJWT: nil)
            .addingKeyBinding(key: holder, algorithm: .ES256, audience: audience, nonce: nonce, issuedAt: clock.now()).serialized
    }

    /// The direct_post form of a response.
    static func form(state: String, vpToken: JSONValue) -> [(name: String, value: String)] {
        [("vp_token", String(decoding: vpToken.bytes, as: UTF8.self)), ("state", state)]
    }
}
