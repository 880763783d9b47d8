import Cryptography
import Foundation
@testable import Issuance
import JOSE
import JSON
import OAuth
import Support
import XCTest

/// Key attestations at the PID Provider (OpenID4VCI 1.0 Appendix D, F.1, F.3); `KeyAttestation.verify` itself is tested in OAuthTests
/// and how the credential endpoint's proof checking uses them. Attestations are signed with the
/// project's own signer by `OAuthFixture.attesterKey`, certified under `OAuthFixture.attestationRoot`.
final class KeyAttestationProofTests: XCTestCase {
    private let now = OAuthFixture.start

    private func attestation(_ keys: [PrivateKey], header: [String: JSONValue] = [:], claims: [String: JSONValue] = [:],
                             signer: PrivateKey = OAuthFixture.attesterKey,
                             certificate: Certificate = OAuthFixture.attesterCertificate) -> String {
        var h: [String: JSONValue] = ["typ": "key-attestation+jwt", "alg": "ES256",
                                      "x5c": .array(Certificate.x5c([certificate]).map(JSONValue.string))]
        for (k, v) in header { if v.isNull { h.removeValue(forKey: k) } else { h[k] = v } }
        var c: [String: JSONValue] = ["iat": .int(now), "exp": .int(now + 3_600),
                                      "attested_keys": .array(keys.map(OAuthFixture.publicJWK))]
        for (k, v) in claims { if v.isNull { c.removeValue(forKey: k) } else { c[k] = v } }
        return OAuthFixture.sign(h, c, signer)
    }

    func testKidIndexProofAndAttestationProofAtTheProvider() throws {
        let provider = try OAuthFixture.make { $0.batchSize = 3 }
        let grant = AccessGrant(tokenHash: "t", clientID: "eudi-wallet", personaID: "erika", credentialConfigurationIDs: [OAuthFixture.sdJWT],
                                credentialIdentifiers: [:], dpopThumbprint: nil, expiresAt: now + 3_600)
        let keys = try (0..<3).map { _ in try PrivateKey(generatingFor: .ES256) }
        let nonce = try provider.issueCNonce()
        let ka = attestation(keys, claims: ["nonce": .string(nonce), "key_storage": ["iso_18045_high"]])
        func proof(kid: String, key: PrivateKey, iss: String? = nil) -> String {
            var claims: [String: JSONValue] = ["aud": .string(OAuthFixture.issuer), "iat": .int(now), "nonce": .string(nonce)]
            if let iss { claims["iss"] = .string(iss) }
            return OAuthFixture.sign(["typ": "openid4vci-proof+jwt", "alg": "ES256", "kid": .string(kid), "key_attestation": .string(ka)],
                                     claims, key)
        }
        // EUDI shape: kid "1" names keys[1]; no iss although the grant has a client.
        let checked = try provider.checkProofs(.jwt([proof(kid: "1", key: keys[1])]), grant: grant,
                                               requirement: KeyAttestationRequirement(keyStorage: ["iso_18045_high"]))
        XCTAssertEqual(checked.map(\.key), [JWK(publicKey: keys[1].publicKey).keyMembersOnly])
        XCTAssertEqual(checked.first?.attestation?.keyStorage, ["iso_18045_high"])
        for (kid, signer) in [("0", keys[1]), ("3", keys[1]), ("01", keys[1]), ("-1", keys[1])] {
            XCTAssertThrowsError(try provider.checkProofs(.jwt([proof(kid: kid, key: signer)]), grant: grant, requirement: nil), kid) {
                XCTAssertEqual(($0 as? IssuanceError)?.code, "invalid_proof", kid)
            }
        }
        XCTAssertThrowsError(try provider.checkProofs(.jwt([proof(kid: "1", key: keys[1], iss: "other")]), grant: grant, requirement: nil))
        XCTAssertThrowsError(try provider.checkProofs(.jwt([proof(kid: "1", key: keys[1])]), grant: grant,
                                                      requirement: KeyAttestationRequirement(keyStorage: ["iso_18045_enhanced-basic"])))
        // A plain jwk proof where one is required.
        let plain = try CredentialTestProvider.proof(keys[0], nonce: nonce, aud: OAuthFixture.issuer, iat: now)
        XCTAssertThrowsError(try provider.checkProofs(.jwt([plain]), grant: grant, requirement: KeyAttestationRequirement())) {
            XCTAssertEqual(($0 as? IssuanceError)?.code, "invalid_proof")
        }
        // F.3: one proof per attested key, bound to each; more keys than batch_size is refused.
        let perKey = try provider.checkProofs(.attestation(ka), grant: grant, requirement: nil)
        XCTAssertEqual(perKey.map(\.key), keys.map { JWK(publicKey: $0.publicKey).keyMembersOnly })
        XCTAssertEqual(Set(perKey.map(\.nonce)), [nonce])
        let four = attestation(keys + [try PrivateKey(generatingFor: .ES256)], claims: ["nonce": .string(nonce)])
        XCTAssertThrowsError(try provider.checkProofs(.attestation(four), grant: grant, requirement: nil)) {
            XCTAssertEqual(($0 as? IssuanceError)?.code, "invalid_credential_request")
        }
    }

    func testMetadataAndConfiguration() throws {
        let json: JSONValue = [
            "credential_configurations": [
                "a": ["format": "dc+sd-jwt", "vct": "a"],
                "b": ["format": "dc+sd-jwt", "vct": "b", "key_attestations_required": false],
                "c": ["format": "dc+sd-jwt", "vct": "c", "key_attestations_required": ["user_authentication": ["iso_18045_high"]]],
            ],
            "personas": [["id": "p", "personal_administrative_number": "1", "given_name": "P", "family_name": "Q", "birthdate": "1980-01-01"]],
            "key_attestations_required": ["key_storage": ["iso_18045_high"]],
        ]
        let configuration = try IssuerConfiguration.parse(JSONReader(json, path: .root)) { _ in .null }
        XCTAssertEqual(configuration.configuration(id: "a")?.keyAttestationsRequired, KeyAttestationRequirement(keyStorage: ["iso_18045_high"]))
        XCTAssertNil(configuration.configuration(id: "b")?.keyAttestationsRequired)
        XCTAssertEqual(configuration.configuration(id: "c")?.keyAttestationsRequired,
                       KeyAttestationRequirement(userAuthentication: ["iso_18045_high"]))
        let metadata = PIDProvider.proofTypesMetadata(try XCTUnwrap(configuration.configuration(id: "a")))
        XCTAssertEqual(metadata["jwt"]?["key_attestations_required"], ["key_storage": ["iso_18045_high"]])
        XCTAssertEqual(metadata["attestation"]?["proof_signing_alg_values_supported"], ["ES256"])
        XCTAssertNil(PIDProvider.proofTypesMetadata(try XCTUnwrap(configuration.configuration(id: "b")))["jwt"]?["key_attestations_required"])
        var bad = json.objectValue!
        bad["key_attestations_required"] = ["key_storage": "iso_18045_high"]
        XCTAssertThrowsError(try IssuerConfiguration.parse(JSONReader(.object(bad), path: .root)) { _ in .null })
    }
}
