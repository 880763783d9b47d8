import Cryptography
import Foundation
import JOSE
import JSON
import OAuth
import Support
import XCTest

/// Attestation-based client authentication on `ClientAttestationVerifier` alone: an attestation
/// under a trusted x5c root, its PoP, and the replay records.
final class ClientAttestationVerifierTests: XCTestCase {
    private let now = OAuthTestKit.start
    private let instanceKey = try! PrivateKey(generatingFor: .ES256)

    private func verifier(requireAttestation: Bool = false, clock: ManualClock? = nil) -> ClientAttestationVerifier {
        ClientAttestationVerifier(
            issuer: OAuthTestKit.issuer,
            trust: AttestationIssuerTrust(roots: [OAuthTestKit.attestationRoot], trustAnchors: [], walletProviders: nil),
            requireAttestation: requireAttestation, proofWindow: 300, clock: clock ?? ManualClock(now), replayStore: MemoryReplayStore())
    }

    private func attestation(sub: String = "wallet-1", signer: PrivateKey = OAuthTestKit.attesterKey) -> String {
        OAuthTestKit.sign(
            ["typ": "oauth-client-attestation+jwt", "alg": "ES256",
             "x5c": .array(Certificate.x5c([OAuthTestKit.attesterCertificate]).map(JSONValue.string))],
            ["iss": "https://wp.example", "sub": .string(sub), "iat": .int(now), "exp": .int(now + 3_600),
             "cnf": ["jwk": OAuthTestKit.publicJWK(instanceKey)]], signer)
    }

    private func pop(aud: String = OAuthTestKit.issuer, iat: Int64? = nil, jti: String = UUID().uuidString) -> String {
        OAuthTestKit.sign(["typ": "oauth-client-attestation-pop+jwt", "alg": "ES256"],
                          ["iss": "wallet-1", "aud": .string(aud), "jti": .string(jti), "iat": .int(iat ?? now)], instanceKey)
    }

    func testAttestedClientAndRefusals() throws {
        let clients = verifier()
        XCTAssertEqual(try clients.authenticate(attestation: attestation(), pop: pop(), clientID: "wallet-1"),
                       ClientIdentity(clientID: "wallet-1", attested: true))
        let once = pop(jti: "once")
        XCTAssertNoThrow(try clients.authenticate(attestation: attestation(), pop: once, clientID: nil))
        let rogue = try PrivateKey(generatingFor: .ES256)
        let refusals: [(String, String?, String?, String?)] = [
            ("replayed PoP", attestation(), once, nil),
            ("signed by another key", attestation(signer: rogue), pop(), nil),
            ("wrong aud", attestation(), pop(aud: "https://other.example"), nil),
            ("stale PoP", attestation(), pop(iat: now - 301), nil),
            ("client_id is not sub", attestation(), pop(), "someone-else"),
            ("no PoP", attestation(), nil, nil),
            ("garbage", "garbage", pop(), nil),
        ]
        for (name, a, p, clientID) in refusals {
            XCTAssertThrowsError(try clients.authenticate(attestation: a, pop: p, clientID: clientID), name) {
                XCTAssertEqual(($0 as? OAuthError)?.code, .invalidClient, name)
                XCTAssertEqual(($0 as? OAuthError)?.statusCode, 401, name)
            }
        }
        XCTAssertThrowsError(try verifier(clock: ManualClock(now + 3_601)).authenticate(
            attestation: attestation(), pop: pop(iat: now + 3_601), clientID: nil), "expired attestation")
    }

    func testPublicClientsUnlessRequired() throws {
        XCTAssertEqual(try verifier().authenticate(attestation: nil, pop: nil, clientID: "public"),
                       ClientIdentity(clientID: "public", attested: false))
        XCTAssertThrowsError(try verifier(requireAttestation: true).authenticate(attestation: nil, pop: nil, clientID: "public")) {
            XCTAssertEqual(($0 as? OAuthError)?.code, .invalidClient)
        }
    }
}
