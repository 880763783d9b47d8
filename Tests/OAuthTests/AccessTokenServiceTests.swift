import Cryptography
import JOSE
import JSON
import OAuth
import Support
import XCTest

/// Access tokens over an in-memory `AccessTokenStore`: minting, hashing, and the
/// protected-resource check (RFC 6750 §2.1, §3.1; RFC 9449 §7).
final class AccessTokenServiceTests: XCTestCase {
    private let now = OAuthTestKit.start
    private let resource = OAuthTestKit.issuer + "/resource"

    private func service(_ clock: ManualClock, requireDPoP: Bool = false, store: MemoryTokenStore = MemoryTokenStore()) -> AccessTokenService {
        AccessTokenService(issuer: OAuthTestKit.issuer, lifetime: 600, requireDPoP: requireDPoP, clock: clock, store: store,
                           dpop: OAuthTestKit.dpopVerifier(clock: clock))
    }

    private func request(_ authorization: String?, dpop: String? = nil) -> ResourceRequest {
        ResourceRequest(authorization: authorization, dpop: dpop, method: "POST", url: resource)
    }

    func testStoredByHashOnly() throws {
        let store = MemoryTokenStore()
        let tokens = service(ManualClock(now), store: store)
        let (token, grant) = try tokens.issue(clientID: "w", subject: "alice", details: ["scope": "x"], dpopThumbprint: nil)
        XCTAssertEqual(grant.tokenHash, AccessTokenService.tokenHash(token))
        XCTAssertFalse(store.rows.current.keys.contains(token), "the token itself is never stored")
        XCTAssertTrue(grant.tokenHash.hasPrefix(String(token.prefix(OAuthIdentifiers.orderedPrefixLength))), "kept in creation order")
        XCTAssertEqual(try tokens.grant(for: request("Bearer \(token)")), grant)
        XCTAssertEqual(grant.details, ["scope": "x"])
        let legacy = OAuthIdentifiers.random()
        XCTAssertEqual(AccessTokenService.tokenHash(legacy), Base64URL.encode(Digest.sha256(Array(legacy.utf8))))
    }

    func testBearerAndDPoPPresentation() throws {
        let clock = ManualClock(now)
        let tokens = service(clock)
        let key = try PrivateKey(generatingFor: .ES256)
        let jkt = JWK(publicKey: key.publicKey).thumbprint()
        let (bound, _) = try tokens.issue(clientID: nil, subject: "alice", details: [:], dpopThumbprint: jkt)
        XCTAssertEqual(try tokens.grant(for: request("DPoP \(bound)", dpop: OAuthTestKit.dpop(key, url: resource, at: now,
                                                                                             accessToken: bound))).subject, "alice")
        let other = try PrivateKey(generatingFor: .ES256)
        let cases: [(String, ResourceRequest, OAuthError.Code, Int, String?, Bool)] = [
            ("no header", request(nil), .invalidToken, 401, "Bearer", false),
            ("unknown scheme", request("Basic abc"), .invalidToken, 401, "Bearer", false),
            ("malformed", request("DPoP"), .invalidToken, 401, "Bearer", true),
            ("unknown token", request("Bearer nope"), .invalidToken, 401, "Bearer", true),
            ("bound token as bearer", request("Bearer \(bound)"), .invalidToken, 401, "DPoP", true),
            ("no proof", request("DPoP \(bound)"), .invalidDPoPProof, 401, "DPoP", true),
            ("wrong ath", request("DPoP \(bound)", dpop: OAuthTestKit.dpop(key, url: resource, at: now, accessToken: "x")),
             .invalidDPoPProof, 401, "DPoP", true),
            ("other key", request("DPoP \(bound)", dpop: OAuthTestKit.dpop(other, url: resource, at: now, accessToken: bound)),
             .invalidToken, 401, "DPoP", true),
        ]
        for (name, resourceRequest, code, status, scheme, namesError) in cases {
            XCTAssertThrowsError(try tokens.grant(for: resourceRequest), name) {
                let error = $0 as? OAuthError
                XCTAssertEqual(error?.code, code, name)
                XCTAssertEqual(error?.statusCode, status, name)
                XCTAssertEqual(error?.authenticationScheme, scheme, name)
                XCTAssertEqual(error?.challengeNamesError, namesError, name)
            }
        }
        clock.advance(600)
        XCTAssertThrowsError(try tokens.grant(for: request("DPoP \(bound)", dpop: OAuthTestKit.dpop(key, url: resource, at: clock.now(),
                                                                                                  accessToken: bound))), "expired")
    }

    func testRequiredDPoPRefusesBearer() throws {
        let tokens = service(ManualClock(now), requireDPoP: true)
        let (token, _) = try tokens.issue(clientID: nil, subject: "alice", details: [:], dpopThumbprint: nil)
        XCTAssertThrowsError(try tokens.grant(for: request("Bearer \(token)"))) {
            XCTAssertEqual(($0 as? OAuthError)?.authenticationScheme, "DPoP")
        }
        XCTAssertThrowsError(try tokens.grant(for: request(nil))) { XCTAssertEqual(($0 as? OAuthError)?.authenticationScheme, "DPoP") }
    }
}
