import Cryptography
import Dispatch
import Foundation
import Issuance
import JOSE
import JSON
import Logging
import OAuth
import Store
import Support
import XCTest

/// A PID Provider for the credential tests: keys made once per process in a temporary folder,
/// an in-memory database, a manual clock; `erika` is issued at once, `dave` deferred.
enum CredentialTestProvider {
    static let issuer = "https://issuer.example/pid-provider"
    static let start = Int64(Date().timeIntervalSince1970)
    static let keysDirectory = NSTemporaryDirectory() + "trustbed-credential-tests-\(getpid())"
    static let sdJWT = CredentialConfiguration(id: "urn:eudi:pid:1", format: .sdJWT, type: "urn:eudi:pid:1", scope: "pid")
    static let mdoc = CredentialConfiguration(id: "eu.europa.ec.eudi.pid.1", format: .mdoc, type: "eu.europa.ec.eudi.pid.1",
                                              scope: "mdoc")

    private static let keys: IssuerKeys = {
        try! IssuerKeys.loadOrCreate(directory: keysDirectory, issuer: issuer, country: "NL", authority: "Test", now: start)
    }()

    static func make(clock: ManualClock = ManualClock(start), batchSize: Int = 3, encryptionRequired: Bool = false,
                     database: Database? = nil, injiCompat: Bool = false) throws -> PIDProvider {
        let personas = [
            Persona(id: "erika", personalAdministrativeNumber: "1",
                    claims: ["given_name": "Erika", "family_name": "Mustermann", "birthdate": "1984-01-26"]),
            Persona(id: "dave", personalAdministrativeNumber: "2", deferred: true,
                    claims: ["given_name": "Dave", "family_name": "Later", "birthdate": "1970-02-02"]),
        ]
        var configuration = IssuerConfiguration(credentialConfigurations: [sdJWT, mdoc], personas: personas)
        configuration.batchSize = batchSize
        configuration.encryptionRequired = encryptionRequired
        configuration.deferredInterval = 5
        configuration.injiCompat = injiCompat
        return PIDProvider(
            issuer: issuer, entityName: "pid-provider", configuration: configuration, keys: keys,
            database: try database ?? Database(path: ":memory:"), clock: clock, logger: Logger(label: "credential-tests"),
            trustAnchors: [], attestationRoots: [], walletProviderTrust: nil, adminToken: "admin-secret")
    }

    /// A grant as `accessGrant(for:)` returns it.
    static func grant(persona: String = "erika", clientID: String? = nil, configurations: [String] = ["urn:eudi:pid:1"],
                      identifiers: [String: String] = [:], tokenHash: String = "token-hash-1") -> AccessGrant {
        AccessGrant(tokenHash: tokenHash, clientID: clientID, personaID: persona, credentialConfigurationIDs: configurations,
                    credentialIdentifiers: identifiers, dpopThumbprint: nil, expiresAt: start + 3_600)
    }

    /// The public JWK of `key` with only its key members.
    static func jwk(_ key: PrivateKey) -> [String: JSONValue] {
        var json = JWK(publicKey: key.publicKey, use: nil).json
        json["kid"] = nil
        return json
    }

    /// A `jwt` key proof (Appendix F.1) signed by `key`; `header` and `claims` override members
    /// (a `.null` value removes one).
    static func proof(_ key: PrivateKey, nonce: String?, aud: String = issuer, iat: Int64? = nil,
                      header: [String: JSONValue] = [:], claims: [String: JSONValue] = [:]) throws -> String {
        var h: [String: JSONValue] = ["typ": "openid4vci-proof+jwt", "jwk": .object(jwk(key))]
        for (k, v) in header { if v.isNull { h.removeValue(forKey: k) } else { h[k] = v } }
        var c: [String: JSONValue] = ["aud": .string(aud), "iat": .int(iat ?? start)]
        if let nonce { c["nonce"] = .string(nonce) }
        for (k, v) in claims { if v.isNull { c.removeValue(forKey: k) } else { c[k] = v } }
        return try JWS.sign(header: h, payloadBytes: JSONValue.object(c).bytes, key: key, algorithm: .ES256)
    }
}

/// `c_nonce` (§7) and the `jwt` key proof checks (Appendix F.1, §8.3.1.2).
final class CredentialProofTests: XCTestCase {
    override class func tearDown() {
        try? FileManager.default.removeItem(atPath: CredentialTestProvider.keysDirectory)
        super.tearDown()
    }

    func testCNonceIsSingleUseAndExpires() throws {
        let clock = ManualClock(CredentialTestProvider.start)
        let provider = try CredentialTestProvider.make(clock: clock)
        let a = try provider.issueCNonce(), b = try provider.issueCNonce()
        XCTAssertNotEqual(a, b, "issued in the same second, still distinct")
        XCTAssertGreaterThanOrEqual(a.count, 32)
        XCTAssertTrue(try provider.consumeCNonce(a))
        XCTAssertFalse(try provider.consumeCNonce(a), "a c_nonce is good for one request")
        XCTAssertFalse(try provider.consumeCNonce("made-up"))
        // Stateless: a nonce is only good with this issuer's MAC over its random part and time.
        var forged = try XCTUnwrap(Base64URL.decode(b))
        forged[0] ^= 1
        XCTAssertFalse(try provider.consumeCNonce(Base64URL.encode(forged)))
        clock.advance(provider.configuration.nonceLifetime)
        XCTAssertFalse(try provider.consumeCNonce(b), "expired after nonce_lifetime")
    }

    func testFiftyConcurrentConsumesHaveOneWinner() throws {
        let provider = try CredentialTestProvider.make()
        let nonce = try provider.issueCNonce()
        let wins = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 50) { _ in
            if (try? provider.consumeCNonce(nonce)) == true { wins.withLock { $0 += 1 } }
        }
        XCTAssertEqual(wins.current, 1)
    }

    func testValidProofsYieldOneKeyEach() throws {
        let provider = try CredentialTestProvider.make()
        let nonce = try provider.issueCNonce()
        let keys = try (0..<3).map { _ in try PrivateKey(generatingFor: .ES256) }
        let proofs = try provider.verifyKeyProofs(keys.map { try CredentialTestProvider.proof($0, nonce: nonce) },
                                                  grant: CredentialTestProvider.grant())
        XCTAssertEqual(proofs.map(\.key), keys.map { try! JWK(json: CredentialTestProvider.jwk($0)) })
        XCTAssertEqual(Set(proofs.map(\.thumbprint)).count, 3)
        XCTAssertFalse(try provider.consumeCNonce(nonce), "the request consumed its c_nonce")
    }

    func testEveryBadProofIsInvalidProof() throws {
        let provider = try CredentialTestProvider.make()
        let key = try PrivateKey(generatingFor: .ES256)
        let now = CredentialTestProvider.start
        var privateJWK = CredentialTestProvider.jwk(key)
        privateJWK["d"] = .string(Base64URL.encode(SecureRandom.bytes(32)))
        let otherKey = try PrivateKey(generatingFor: .ES256)
        let noneHeader = Base64URL.encode(JSONValue.object(["typ": "openid4vci-proof+jwt", "alg": "none",
                                                            "jwk": .object(CredentialTestProvider.jwk(key))]).bytes)
        let cases: [(String, (String) throws -> String)] = [
            ("wrong typ", { try CredentialTestProvider.proof(key, nonce: $0, header: ["typ": "JWT"]) }),
            ("no typ", { try CredentialTestProvider.proof(key, nonce: $0, header: ["typ": .null]) }),
            ("alg none", { noneHeader + "." + Base64URL.encode(JSONValue.object(["aud": .string(CredentialTestProvider.issuer),
                                                                                 "iat": .int(now), "nonce": .string($0)]).bytes) + "." }),
            ("wrong aud", { try CredentialTestProvider.proof(key, nonce: $0, aud: "https://other.example") }),
            ("aud array", { try CredentialTestProvider.proof(key, nonce: $0, claims: ["aud": [.string(CredentialTestProvider.issuer)]]) }),
            ("old iat", { try CredentialTestProvider.proof(key, nonce: $0, iat: now - 3_600) }),
            ("future iat", { try CredentialTestProvider.proof(key, nonce: $0, iat: now + 3_600) }),
            ("no iat", { try CredentialTestProvider.proof(key, nonce: $0, claims: ["iat": .null]) }),
            ("no nonce", { _ in try CredentialTestProvider.proof(key, nonce: nil) }),
            ("private key in jwk", { try CredentialTestProvider.proof(key, nonce: $0, header: ["jwk": .object(privateJWK)]) }),
            ("jwk and kid", { try CredentialTestProvider.proof(key, nonce: $0, header: ["kid": "did:example:123#1"]) }),
            ("kid only", { try CredentialTestProvider.proof(key, nonce: $0, header: ["jwk": .null, "kid": "did:example:123#1"]) }),
            ("no key", { try CredentialTestProvider.proof(key, nonce: $0, header: ["jwk": .null]) }),
            ("jwk of another key", { try CredentialTestProvider.proof(key, nonce: $0,
                                                                     header: ["jwk": .object(CredentialTestProvider.jwk(otherKey))]) }),
            ("iss on an anonymous grant", { try CredentialTestProvider.proof(key, nonce: $0, claims: ["iss": "wallet"]) }),
            ("not a JWT", { _ in "not-a-jwt" }),
        ]
        for (name, make) in cases {
            let nonce = try provider.issueCNonce()
            XCTAssertThrowsError(try provider.verifyKeyProofs([try make(nonce)], grant: CredentialTestProvider.grant()), name) {
                XCTAssertEqual(($0 as? IssuanceError)?.codeValue, .invalidProof, "\(name): \($0)")
            }
            XCTAssertTrue(try provider.consumeCNonce(nonce), "\(name): a refused proof must not burn the c_nonce")
        }
    }

    /// Appendix F.1: `iss` is optional (EUDI wallets omit it after a token request with
    /// `client_id`); when present it must be the grant's client.
    func testClientIDMustBeTheIssOfANonAnonymousGrant() throws {
        let provider = try CredentialTestProvider.make()
        let key = try PrivateKey(generatingFor: .ES256)
        let grant = CredentialTestProvider.grant(clientID: "wallet-1")
        for (iss, accepted) in [(JSONValue.null, true), ("other", false), ("wallet-1", true)] {
            let nonce = try provider.issueCNonce()
            let proof = try CredentialTestProvider.proof(key, nonce: nonce, claims: ["iss": iss])
            if accepted {
                XCTAssertEqual(try provider.verifyKeyProofs([proof], grant: grant).count, 1)
            } else {
                XCTAssertThrowsError(try provider.verifyKeyProofs([proof], grant: grant)) {
                    XCTAssertEqual(($0 as? IssuanceError)?.codeValue, .invalidProof)
                }
            }
        }
    }

    func testNonceReplayIsInvalidNonce() throws {
        let provider = try CredentialTestProvider.make()
        let nonce = try provider.issueCNonce()
        let grant = CredentialTestProvider.grant()
        _ = try provider.verifyKeyProofs([try CredentialTestProvider.proof(PrivateKey(generatingFor: .ES256), nonce: nonce)], grant: grant)
        for candidate in [nonce, "made-up-nonce"] {
            let proof = try CredentialTestProvider.proof(PrivateKey(generatingFor: .ES256), nonce: candidate)
            XCTAssertThrowsError(try provider.verifyKeyProofs([proof], grant: grant)) {
                XCTAssertEqual(($0 as? IssuanceError)?.codeValue, .invalidNonce)
            }
        }
    }

    func testBatchLimitAndDuplicateKeys() throws {
        let provider = try CredentialTestProvider.make(batchSize: 3)
        let grant = CredentialTestProvider.grant()
        var nonce = try provider.issueCNonce()
        let four = try (0..<4).map { _ in try CredentialTestProvider.proof(PrivateKey(generatingFor: .ES256), nonce: nonce) }
        XCTAssertThrowsError(try provider.verifyKeyProofs(four, grant: grant)) {
            XCTAssertEqual(($0 as? IssuanceError)?.codeValue, .invalidCredentialRequest)
        }
        let key = try PrivateKey(generatingFor: .ES256)
        let twice = try [CredentialTestProvider.proof(key, nonce: nonce), CredentialTestProvider.proof(key, nonce: nonce, iat: CredentialTestProvider.start - 1)]
        XCTAssertThrowsError(try provider.verifyKeyProofs(twice, grant: grant)) {
            XCTAssertEqual(($0 as? IssuanceError)?.codeValue, .invalidProof)
        }
        XCTAssertTrue(try provider.consumeCNonce(nonce), "refused requests leave the nonce usable")
        nonce = try provider.issueCNonce()
        XCTAssertThrowsError(try provider.verifyKeyProofs([], grant: grant)) {
            XCTAssertEqual(($0 as? IssuanceError)?.codeValue, .invalidProof)
        }
    }

    /// `x5c` names the key by a certificate (Appendix F.1); the issuer's own document signer
    /// certificate and key stand in for a wallet's here.
    func testX5CProofBindsTheCertificateKey() throws {
        let provider = try CredentialTestProvider.make()
        let nonce = try provider.issueCNonce()
        let key = provider.keys.documentSignerKey
        let x5c = JSONValue(Certificate.x5c([provider.keys.documentSigner]))
        let proof = try CredentialTestProvider.proof(key, nonce: nonce, header: ["jwk": .null, "x5c": x5c])
        let verified = try provider.verifyKeyProofs([proof], grant: CredentialTestProvider.grant())
        XCTAssertEqual(verified.first?.key, try JWK(json: CredentialTestProvider.jwk(key)))
        let other = try CredentialTestProvider.proof(PrivateKey(generatingFor: .ES256), nonce: try provider.issueCNonce(),
                                                     header: ["jwk": .null, "x5c": x5c])
        XCTAssertThrowsError(try provider.verifyKeyProofs([other], grant: CredentialTestProvider.grant())) {
            XCTAssertEqual(($0 as? IssuanceError)?.codeValue, .invalidProof)
        }
    }
}
