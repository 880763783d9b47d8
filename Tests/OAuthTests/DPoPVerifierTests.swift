import Cryptography
import JOSE
import JSON
import OAuth
import Support
import XCTest

/// RFC 9449 §4.3 proof checks on `DPoPVerifier` alone, with in-memory replay records.
final class DPoPVerifierTests: XCTestCase {
    private let now = OAuthTestKit.start
    private let url = OAuthTestKit.issuer + "/token"

    func testValidProofAndEachFailure() throws {
        let verifier = OAuthTestKit.dpopVerifier(clock: ManualClock(now))
        let key = try PrivateKey(generatingFor: .ES256)
        let nonce = verifier.nonces.current()
        let good = OAuthTestKit.dpop(key, url: url, at: now, nonce: nonce)
        let proof = try verifier.verify(good, method: "POST", url: url, nonce: .required)
        XCTAssertEqual(proof.thumbprint, JWK(publicKey: key.publicKey).thumbprint())
        XCTAssertThrowsError(try verifier.verify(good, method: "POST", url: url, nonce: .required), "jti replayed") {
            XCTAssertEqual(($0 as? OAuthError)?.code, .invalidDPoPProof)
        }
        let other = try PrivateKey(generatingFor: .ES256)
        let failures: [(String, String)] = [
            ("typ", OAuthTestKit.dpop(key, url: url, at: now, nonce: nonce) { h, _ in h["typ"] = "JWT" }),
            ("htm", OAuthTestKit.dpop(key, method: "GET", url: url, at: now, nonce: nonce)),
            ("htu", OAuthTestKit.dpop(key, url: "https://evil.example/token", at: now, nonce: nonce)),
            ("old iat", OAuthTestKit.dpop(key, url: url, at: now - 301, nonce: nonce)),
            ("future iat", OAuthTestKit.dpop(key, url: url, at: now + 301, nonce: nonce)),
            ("no jti", OAuthTestKit.dpop(key, url: url, at: now, nonce: nonce) { _, c in c["jti"] = nil }),
            ("other key", OAuthTestKit.dpop(key, url: url, at: now, nonce: nonce) { h, _ in h["jwk"] = OAuthTestKit.publicJWK(other) }),
            ("two proofs", good + ", " + good),
            ("garbage", "not-a-jwt"),
        ]
        for (name, proof) in failures {
            XCTAssertThrowsError(try verifier.verify(proof, method: "POST", url: url, nonce: .required), name) {
                let error = $0 as? OAuthError
                XCTAssertEqual(error?.code, .invalidDPoPProof, name)
                XCTAssertEqual(error?.statusCode, 400, "at the token endpoint: 400")
            }
        }
        XCTAssertNoThrow(try verifier.verify(OAuthTestKit.dpop(key, url: "HTTPS://AS.Example/wallet-provider/token?x=1", at: now,
                                                               nonce: nonce), method: "POST", url: url, nonce: .required),
                         "query ignored, scheme and host case-insensitive (§4.3 item 9)")
    }

    /// §8: a missing or stale nonce is `use_dpop_nonce` with a fresh one; at a resource the
    /// errors are 401 and name the DPoP scheme (§7.1, §9).
    func testNoncesAndResourceErrors() throws {
        let clock = ManualClock(now)
        let verifier = OAuthTestKit.dpopVerifier(clock: clock)
        let key = try PrivateKey(generatingFor: .ES256)
        XCTAssertThrowsError(try verifier.verify(OAuthTestKit.dpop(key, url: url, at: now), method: "POST", url: url,
                                                 nonce: .required)) {
            let error = $0 as? OAuthError
            XCTAssertEqual(error?.code, .useDPoPNonce)
            XCTAssertEqual(error?.dpopNonce, verifier.nonces.current())
        }
        XCTAssertNoThrow(try verifier.verify(OAuthTestKit.dpop(key, url: url, at: now), method: "POST", url: url, nonce: .optional))
        let forged = Base64URL.encode(Array(repeating: 0, count: 8) + Array(repeating: 7, count: 16))
        XCTAssertThrowsError(try verifier.verify(OAuthTestKit.dpop(key, url: url, at: now, nonce: forged), method: "POST", url: url,
                                                 nonce: .optional, resource: true)) {
            let error = $0 as? OAuthError
            XCTAssertEqual(error?.code, .useDPoPNonce)
            XCTAssertEqual(error?.statusCode, 401)
            XCTAssertEqual(error?.authenticationScheme, "DPoP")
        }
        XCTAssertThrowsError(try verifier.verify(nil, method: "POST", url: url, nonce: .optional, resource: true)) {
            XCTAssertEqual(($0 as? OAuthError)?.statusCode, 401)
        }
    }

    /// A failing replay store is the server's error (500), its detail kept out of the description.
    func testStoreFailureIsServerError() throws {
        let verifier = OAuthTestKit.dpopVerifier(clock: ManualClock(now), replays: FailingReplayStore())
        let key = try PrivateKey(generatingFor: .ES256)
        XCTAssertThrowsError(try verifier.verify(OAuthTestKit.dpop(key, url: url, at: now), method: "POST", url: url, nonce: .optional)) {
            let error = $0 as? OAuthError
            XCTAssertEqual(error?.code, .serverError)
            XCTAssertEqual(error?.statusCode, 500)
            XCTAssertFalse(error?.description.contains("disk") ?? true)
            XCTAssertTrue(error?.cause?.contains("disk I/O") ?? false)
        }
    }
}
