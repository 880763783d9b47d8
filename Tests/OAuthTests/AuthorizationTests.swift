import Cryptography
import JSON
import OAuth
import Support
import XCTest

/// PKCE, the OAuth parameters of a PAR, pushed requests and authorization codes, over in-memory stores.
final class AuthorizationTests: XCTestCase {
    private let now = OAuthTestKit.start
    private let rule = RedirectURIRule()

    /// RFC 7636 Appendix B.
    func testPKCE() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        XCTAssertEqual(PKCE.challenge(verifier: verifier), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        XCTAssertTrue(PKCE.verify(verifier: verifier, challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"))
        XCTAssertFalse(PKCE.verify(verifier: verifier + "x", challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"))
        XCTAssertFalse(PKCE.verify(verifier: verifier, challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN"), "one character off")
        XCTAssertFalse(PKCE.verify(verifier: verifier, challenge: "short"))
        XCTAssertFalse(PKCE.verify(verifier: "short", challenge: PKCE.challenge(verifier: "short")))
        XCTAssertTrue(PKCE.isValidS256Challenge("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"))
        XCTAssertFalse(PKCE.isValidS256Challenge("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-c"))
    }

    func testPushedParameters() throws {
        let challenge = PKCE.challenge(verifier: String(repeating: "v", count: 43))
        let base = [("response_type", "code"), ("redirect_uri", "http://127.0.0.1/cb"), ("code_challenge", challenge),
                    ("code_challenge_method", "S256"), ("state", "s1")]
        func parse(_ pairs: [(String, String)], client: ClientIdentity = ClientIdentity(clientID: "w", attested: false)) throws
            -> PushedAuthorizationParameters {
            try PushedAuthorizationParameters.parse(Parameters(pairs: pairs.map { (name: $0.0, value: $0.1) }), client: client, rule: rule)
        }
        let parsed = try parse(base)
        XCTAssertEqual(parsed, PushedAuthorizationParameters(clientID: "w", attested: false, redirectURI: "http://127.0.0.1/cb",
                                                             codeChallenge: challenge, state: "s1"))
        func replacing(_ name: String, _ value: String?) -> [(String, String)] {
            base.filter { $0.0 != name } + (value.map { [(name, $0)] } ?? [])
        }
        let refusals: [(String, [(String, String)], OAuthError.Code)] = [
            ("response_type", replacing("response_type", "token"), .unsupportedResponseType),
            ("plain PKCE", replacing("code_challenge_method", "plain"), .invalidRequest),
            ("no PKCE method", replacing("code_challenge_method", nil), .invalidRequest),
            ("bad challenge", replacing("code_challenge", "abc"), .invalidRequest),
            ("remote http", replacing("redirect_uri", "http://evil.example/cb"), .invalidRequest),
            ("request_uri inside", base + [("request_uri", "urn:x")], .invalidRequest),
        ]
        for (name, pairs, code) in refusals {
            XCTAssertThrowsError(try parse(pairs), name) { XCTAssertEqual(($0 as? OAuthError)?.code, code, name) }
        }
        XCTAssertThrowsError(try parse(base, client: ClientIdentity(clientID: nil, attested: false))) {
            XCTAssertEqual(($0 as? OAuthError)?.code, .invalidClient)
        }
        XCTAssertThrowsError(try parse(replacing("redirect_uri", nil))) { XCTAssertTrue($0 is ParameterError) }
    }

    func testPushedRequestsAreUsedOnceByTheirClient() throws {
        let clock = ManualClock(now)
        let requests = PushedAuthorizationRequests(issuer: OAuthTestKit.issuer, lifetime: 60, clock: clock, store: MemoryPushedRequestStore())
        let (uri, expiresIn) = try requests.push(clientID: "w", parameters: "{\"a\":1}")
        XCTAssertTrue(uri.hasPrefix("urn:ietf:params:oauth:request_uri:"))
        XCTAssertEqual(expiresIn, 60)
        XCTAssertEqual(try requests.pending(uri, clientID: "w"), "{\"a\":1}")
        XCTAssertThrowsError(try requests.pending(uri, clientID: "other")) { XCTAssertEqual(($0 as? OAuthError)?.code, .invalidRequestURI) }
        XCTAssertThrowsError(try requests.pending("urn:other:" + uri, clientID: "w"))
        try requests.consume(uri)
        XCTAssertThrowsError(try requests.consume(uri)) { XCTAssertEqual(($0 as? OAuthError)?.code, .invalidRequestURI) }
        XCTAssertThrowsError(try requests.pending(uri, clientID: "w"))
        let (late, _) = try requests.push(clientID: "w", parameters: "{}")
        clock.advance(60)
        XCTAssertThrowsError(try requests.pending(late, clientID: "w"), "expired")
    }

    func testCodesAreSingleUse() throws {
        let clock = ManualClock(now)
        let codes = AuthorizationCodes(issuer: OAuthTestKit.issuer, lifetime: 60, clock: clock, store: MemoryCodeStore())
        let code = try codes.issue(clientID: "w", grant: ["persona": "alice"])
        let record = try codes.redeem(code)
        XCTAssertEqual(record.clientID, "w")
        XCTAssertEqual(try JSONValue.parse(record.grant), ["persona": "alice"])
        XCTAssertThrowsError(try codes.redeem(code)) { XCTAssertEqual(($0 as? OAuthError)?.code, .invalidGrant) }
        XCTAssertThrowsError(try codes.redeem("unknown")) { XCTAssertEqual(($0 as? OAuthError)?.code, .invalidGrant) }
        let expiring = try codes.issue(clientID: "w", grant: [:])
        clock.advance(60)
        XCTAssertThrowsError(try codes.redeem(expiring)) { XCTAssertEqual(($0 as? OAuthError)?.description, "the authorization code has expired") }
    }

    /// Each code's status (RFC 6749 §5.2, RFC 6750 §3.1, RFC 9449 §7.1).
    func testErrorStatuses() {
        XCTAssertEqual(OAuthError(.invalidRequest, "x").statusCode, 400)
        XCTAssertEqual(OAuthError(.invalidClient, "x").statusCode, 401)
        XCTAssertEqual(OAuthError(.invalidToken, "x").statusCode, 401)
        XCTAssertEqual(OAuthError(.insufficientScope, "x").statusCode, 403)
        XCTAssertEqual(OAuthError(.accessDenied, "x").statusCode, 403)
        XCTAssertEqual(OAuthError(.invalidDPoPProof, "x").statusCode, 400)
        XCTAssertEqual(OAuthError(.invalidDPoPProof, "x", authenticationScheme: "DPoP").statusCode, 401)
        XCTAssertEqual(OAuthError(.useDPoPNonce, "x", authenticationScheme: "DPoP").statusCode, 401)
        XCTAssertEqual(OAuthError(.serverError, "x").statusCode, 500)
        XCTAssertEqual(OAuthError(.temporarilyUnavailable, "x").statusCode, 503)
        XCTAssertFalse(OAuthError.authenticationRequired("x", scheme: "Bearer").challengeNamesError)
    }
}
