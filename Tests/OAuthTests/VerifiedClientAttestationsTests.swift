import Cryptography
import Foundation
import JOSE
import JSON
@testable import OAuth
import Support
import XCTest

/// The verifier's memory of attestations whose signature verified: the same JWT is accepted
/// again without a second verification, but its times, its signer's trust and every PoP are
/// checked on each use; another JWT misses; the memory is bounded.
final class VerifiedClientAttestationsTests: XCTestCase {
    private let now = OAuthTestKit.start
    private let instanceKey = try! PrivateKey(generatingFor: .ES256)

    /// A federation answer tests change: the wallet provider's `jwks`, or no answer at all.
    private final class Federation: WalletProviderTrust, @unchecked Sendable {
        let keys: Locked<JSONValue?>
        init(_ keys: JSONValue?) { self.keys = Locked(keys) }
        func walletProviderMetadata(entityID: String, trustAnchors: [String]) throws -> [String: JSONValue] {
            guard let jwks = keys.current else { throw AttestationIssuerTrust.Refusal("no chain") }
            return ["wallet_provider": ["jwks": jwks]]
        }
    }

    private func jwks(_ key: PrivateKey) -> JSONValue { ["keys": [OAuthTestKit.publicJWK(key)]] }

    private func verifier(clock: ManualClock, trust: AttestationIssuerTrust? = nil) -> ClientAttestationVerifier {
        ClientAttestationVerifier(
            issuer: OAuthTestKit.issuer,
            trust: trust ?? AttestationIssuerTrust(roots: [OAuthTestKit.attestationRoot], trustAnchors: [], walletProviders: nil),
            requireAttestation: true, proofWindow: 300, clock: clock, replayStore: MemoryReplayStore())
    }

    private func attestation(x5c: Bool = true, exp: Int64? = nil) -> String {
        var header: [String: JSONValue] = ["typ": "oauth-client-attestation+jwt", "alg": "ES256"]
        if x5c { header["x5c"] = .array(Certificate.x5c([OAuthTestKit.attesterCertificate]).map(JSONValue.string)) }
        return OAuthTestKit.sign(header, ["iss": "https://wp.example", "sub": "wallet-1", "iat": .int(now), "exp": .int(exp ?? now + 3_600),
                                          "cnf": ["jwk": OAuthTestKit.publicJWK(instanceKey)]], OAuthTestKit.attesterKey)
    }

    private func pop(at iat: Int64, signer: PrivateKey? = nil) -> String {
        OAuthTestKit.sign(["typ": "oauth-client-attestation-pop+jwt", "alg": "ES256"],
                          ["iss": "wallet-1", "aud": .string(OAuthTestKit.issuer), "jti": .string(UUID().uuidString), "iat": .int(iat)],
                          signer ?? instanceKey)
    }

    func testTheSameAttestationIsRememberedAndEveryPoPIsVerified() throws {
        let clock = ManualClock(now)
        let clients = verifier(clock: clock)
        let attestation = attestation()
        XCTAssertNoThrow(try clients.authenticate(attestation: attestation, pop: pop(at: now), clientID: nil))
        XCTAssertEqual(clients.verified.count, 1)
        XCTAssertNotNil(clients.verified.lookup(attestation))
        XCTAssertEqual(try clients.authenticate(attestation: attestation, pop: pop(at: now), clientID: nil),
                       ClientIdentity(clientID: "wallet-1", attested: true))
        XCTAssertEqual(clients.verified.count, 1, "a hit adds nothing")
        // The PoP is verified on every request: one signed by another key is refused.
        XCTAssertThrowsError(try clients.authenticate(attestation: attestation, pop: pop(at: now, signer: try PrivateKey(generatingFor: .ES256)),
                                                      clientID: nil))
        XCTAssertThrowsError(try clients.authenticate(attestation: attestation, pop: pop(at: now), clientID: "someone-else"))
        // Another JWT (one character of its signature changed) is not the remembered one.
        var tampered = Array(attestation.utf8)
        tampered[tampered.count - 2] = tampered[tampered.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        XCTAssertNil(clients.verified.lookup(String(decoding: tampered, as: UTF8.self)))
        XCTAssertThrowsError(try clients.authenticate(attestation: String(decoding: tampered, as: UTF8.self), pop: pop(at: now), clientID: nil))
    }

    func testARememberedAttestationStillExpires() throws {
        let clock = ManualClock(now)
        let clients = verifier(clock: clock)
        let attestation = attestation(exp: now + 600)
        XCTAssertNoThrow(try clients.authenticate(attestation: attestation, pop: pop(at: now), clientID: nil))
        clock.set(now + 600)
        XCTAssertThrowsError(try clients.authenticate(attestation: attestation, pop: pop(at: now + 600), clientID: nil)) {
            XCTAssertEqual(($0 as? OAuthError)?.code, .invalidClient)
            XCTAssertTrue("\($0)".contains("expired"), "\($0)")
        }
    }

    func testASignerNoLongerTrustedIsRefusedDespiteTheMemory() throws {
        let clock = ManualClock(now)
        let federation = Federation(jwks(OAuthTestKit.attesterKey))
        let clients = verifier(clock: clock, trust: AttestationIssuerTrust(roots: [], trustAnchors: ["https://ta.example"],
                                                                           walletProviders: federation))
        let attestation = attestation(x5c: false)
        XCTAssertNoThrow(try clients.authenticate(attestation: attestation, pop: pop(at: now), clientID: nil))
        XCTAssertEqual(clients.verified.count, 1)
        // The provider now publishes another key: the remembered signature no longer counts.
        federation.keys.withLock { $0 = self.jwks(try! PrivateKey(generatingFor: .ES256)) }
        XCTAssertThrowsError(try clients.authenticate(attestation: attestation, pop: pop(at: now), clientID: nil))
        // And without a chain to a Trust Anchor at all.
        federation.keys.withLock { $0 = nil }
        XCTAssertThrowsError(try clients.authenticate(attestation: attestation, pop: pop(at: now), clientID: nil))
        // Trusted again with the original key: accepted.
        federation.keys.withLock { $0 = self.jwks(OAuthTestKit.attesterKey) }
        XCTAssertNoThrow(try clients.authenticate(attestation: attestation, pop: pop(at: now), clientID: nil))
    }

    func testTheMemoryIsBounded() throws {
        let clients = verifier(clock: ManualClock(now))
        let memory = VerifiedClientAttestations(limit: 2)
        for _ in 0..<5 {
            let attestation = attestation()
            XCTAssertNoThrow(try clients.authenticate(attestation: attestation, pop: pop(at: now), clientID: nil))
            memory.store(try XCTUnwrap(clients.verified.lookup(attestation)))
            XCTAssertLessThanOrEqual(memory.count, 2)
        }
        XCTAssertEqual(memory.count, 2)
        XCTAssertEqual(clients.verified.count, 5)
    }
}
