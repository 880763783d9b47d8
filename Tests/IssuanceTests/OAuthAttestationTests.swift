import Cryptography
import Issuance
import JOSE
import JSON
import Logging
import OAuth
import Store
import Support
import XCTest

/// Attestation-based client authentication (draft-ietf-oauth-attestation-based-client-auth):
/// trusted through an x5c root or a wallet provider's federation metadata.
final class OAuthAttestationTests: XCTestCase {
    private let now = OAuthFixture.start

    private func refused(_ provider: PIDProvider, _ attestation: String?, _ pop: String?, clientID: String? = nil,
                         _ name: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try provider.authenticateClient(attestation: attestation, pop: pop, clientID: clientID), name,
                             file: file, line: line) {
            XCTAssertEqual(($0 as? IssuanceError)?.codeValue, .invalidClient, name, file: file, line: line)
            XCTAssertEqual(($0 as? IssuanceError)?.statusCode, 401, name, file: file, line: line)
        }
    }

    func testTrustedX5CRootAndEachRefusal() throws {
        let provider = try OAuthFixture.make()
        let client = OAuthFixture.Client(at: now)
        let identity = try provider.authenticateClient(attestation: client.attestation, pop: client.pop(at: now), clientID: client.clientID)
        XCTAssertEqual(identity, ClientIdentity(clientID: client.clientID, attested: true))

        // Replayed PoP (same jti).
        let pop = client.pop(at: now, jti: "once")
        XCTAssertNoThrow(try provider.authenticateClient(attestation: client.attestation, pop: pop, clientID: nil))
        refused(provider, client.attestation, pop, "replayed PoP jti")

        // An attester whose certificate is self-signed (not under the configured root).
        let rogueKey = try PrivateKey(generatingFor: .ES256)
        let rogueRoot = try AnnexB.makeIACA(key: rogueKey, country: "NL", commonName: "Rogue", issuerAltName: .uri("https://r.example"),
                                            crlURL: "https://r.example/crl",
                                            validity: .init(notBefore: now - 10, notAfter: now + 86_400))
        let rogue = OAuthFixture.Client(at: now, attester: rogueKey, certificate: rogueRoot)
        refused(provider, rogue.attestation, rogue.pop(at: now), "untrusted root")
        // The right certificate, but signed by another key.
        let forged = OAuthFixture.Client(at: now, attester: rogueKey)
        refused(provider, forged.attestation, forged.pop(at: now), "signature by another key")

        refused(provider, client.attestation, client.pop(audience: "https://other-as.example", at: now), "wrong PoP aud")
        refused(provider, client.attestation, client.pop(at: now - 301), "stale PoP")
        refused(provider, client.attestation, OAuthFixture.Client(at: now).pop(at: now), "PoP by another instance key")
        refused(provider, client.attestation, client.pop(at: now), clientID: "someone-else", "client_id is not sub")
        refused(provider, client.attestation, nil, "attestation without PoP")
        refused(provider, nil, client.pop(at: now), "PoP without attestation")
        refused(provider, "garbage", client.pop(at: now), "malformed attestation")
        let later = try OAuthFixture.make(clock: ManualClock(now + 3_601))
        refused(later, client.attestation, client.pop(at: now + 3_601), "expired attestation")

        // Without headers: a public client, unless attestation is required.
        XCTAssertEqual(try provider.authenticateClient(attestation: nil, pop: nil, clientID: "public"),
                       ClientIdentity(clientID: "public", attested: false))
        refused(try OAuthFixture.make { $0.requireClientAttestation = true }, nil, nil, clientID: "public", "attestation required")
    }

    /// The federation path: the attestation's `iss` must be a wallet provider whose chain
    /// reaches a configured Trust Anchor; its keys come from the resolved metadata.
    func testWalletProviderTrustedThroughFederationMetadata() throws {
        struct StubTrust: WalletProviderTrust {
            let entityID: String
            let jwks: JSONValue
            func walletProviderMetadata(entityID: String, trustAnchors: [String]) throws -> [String: JSONValue] {
                guard entityID == self.entityID, trustAnchors == ["https://ta.example"] else { throw StoreError.cannotOpen("no chain") }
                return ["wallet_provider": ["jwks": jwks]]
            }
        }
        let walletProviderKey = try PrivateKey(generatingFor: .ES256)
        let jwk = JWK(publicKey: walletProviderKey.publicKey, algorithm: .ES256)
        var configuration = IssuerConfiguration(credentialConfigurations: [
            CredentialConfiguration(id: OAuthFixture.sdJWT, format: .sdJWT, type: OAuthFixture.sdJWT, scope: OAuthFixture.sdJWT),
        ], personas: [Persona(id: "p", personalAdministrativeNumber: "1",
                              claims: ["given_name": "A", "family_name": "B", "birthdate": "2000-01-01"])])
        configuration.requireClientAttestation = true
        let provider = PIDProvider(
            issuer: OAuthFixture.issuer, entityName: "pid-provider", configuration: configuration,
            keys: try OAuthFixture.make().keys, database: try Database(path: ":memory:"), clock: ManualClock(now),
            logger: Logger(label: "t"), trustAnchors: ["https://ta.example"], attestationRoots: [],
            walletProviderTrust: StubTrust(entityID: "https://wp.example", jwks: ["keys": [jwk.jsonValue]]), adminToken: "x")

        func attestation(iss: String, key: PrivateKey, instance: PrivateKey, sub: String = "w1") -> String {
            OAuthFixture.sign(["typ": "oauth-client-attestation+jwt", "alg": "ES256", "kid": .string(jwk.kid!)],
                              ["iss": .string(iss), "sub": .string(sub), "exp": .int(now + 60),
                               "cnf": ["jwk": OAuthFixture.publicJWK(instance)]], key)
        }
        func pop(_ instance: PrivateKey) -> String {
            OAuthFixture.sign(["typ": "oauth-client-attestation-pop+jwt", "alg": "ES256"],
                              ["aud": [.string(OAuthFixture.issuer)], "jti": .string(UUID().uuidString), "iat": .int(now)], instance)
        }
        let instance = try PrivateKey(generatingFor: .ES256)
        XCTAssertEqual(try provider.authenticateClient(
            attestation: attestation(iss: "https://wp.example", key: walletProviderKey, instance: instance), pop: pop(instance),
            clientID: nil), ClientIdentity(clientID: "w1", attested: true))
        refused(provider, attestation(iss: "https://stranger.example", key: walletProviderKey, instance: instance), pop(instance),
                "issuer without a chain")
        refused(provider, attestation(iss: "https://wp.example", key: try PrivateKey(generatingFor: .ES256), instance: instance),
                pop(instance), "key not in the wallet provider's jwks")
        // typ matters: a DPoP-typed JWT is not an attestation.
        let wrongTyp = OAuthFixture.sign(["typ": "dpop+jwt", "alg": "ES256"],
                                         ["iss": "https://wp.example", "sub": "w1", "exp": .int(now + 60),
                                          "cnf": ["jwk": OAuthFixture.publicJWK(instance)]], walletProviderKey)
        refused(provider, wrongTyp, pop(instance), "wrong typ")
    }
}
