import Cryptography
import Issuance
import JOSE
import JSON
import OAuth
import Support
import XCTest

/// RFC 9449 proof checks and the protected-resource check (`accessGrant(for:)`).
final class OAuthDPoPTests: XCTestCase {
    private let now = OAuthFixture.start
    private let url = OAuthFixture.issuer + "/token"

    func testValidProofAndEachFailure() throws {
        let provider = try OAuthFixture.make()
        let key = try PrivateKey(generatingFor: .ES256)
        let nonce = provider.dpopNonce()
        let good = OAuthFixture.dpop(key, url: url, at: now, nonce: nonce)
        let proof = try provider.verifyDPoPProof(good, method: "POST", url: url, nonce: .required)
        XCTAssertEqual(proof.thumbprint, JWK(publicKey: key.publicKey).thumbprint())
        // The same proof again: its jti is remembered.
        XCTAssertThrowsError(try provider.verifyDPoPProof(good, method: "POST", url: url, nonce: .required)) {
            XCTAssertEqual(($0 as? IssuanceError)?.codeValue, .invalidDPoPProof)
        }

        let other = try PrivateKey(generatingFor: .ES256)
        let p384 = try PrivateKey(generatingFor: .ES384)
        let failures: [(String, String)] = [
            ("typ", OAuthFixture.dpop(key, url: url, at: now, nonce: nonce) { h, _ in h["typ"] = "JWT" }),
            ("typ application/", OAuthFixture.dpop(key, url: url, at: now, nonce: nonce) { h, _ in h["typ"] = "application/dpop+jwt" }),
            ("htm", OAuthFixture.dpop(key, method: "GET", url: url, at: now, nonce: nonce)),
            ("htu", OAuthFixture.dpop(key, url: "https://evil.example/token", at: now, nonce: nonce)),
            ("old iat", OAuthFixture.dpop(key, url: url, at: now - 301, nonce: nonce)),
            ("future iat", OAuthFixture.dpop(key, url: url, at: now + 301, nonce: nonce)),
            ("no jti", OAuthFixture.dpop(key, url: url, at: now, nonce: nonce) { _, c in c["jti"] = nil }),
            ("no jwk", OAuthFixture.dpop(key, url: url, at: now, nonce: nonce) { h, _ in h["jwk"] = nil }),
            ("other key", OAuthFixture.dpop(key, url: url, at: now, nonce: nonce) { h, _ in h["jwk"] = OAuthFixture.publicJWK(other) }),
            ("private jwk", OAuthFixture.dpop(key, url: url, at: now, nonce: nonce) { h, _ in
                var jwk = OAuthFixture.publicJWK(key).objectValue!
                jwk["d"] = .string(Base64URL.encode(Array(repeating: 1, count: 32)))
                h["jwk"] = .object(jwk)
            }),
            ("two proofs", good + ", " + good),
            ("garbage", "not-a-jwt"),
        ]
        for (name, proof) in failures {
            XCTAssertThrowsError(try provider.verifyDPoPProof(proof, method: "POST", url: url, nonce: .required), name) {
                XCTAssertEqual(($0 as? IssuanceError)?.codeValue, .invalidDPoPProof, name)
            }
        }
        // ES384 is not advertised, so it is refused even though the signature is fine.
        let es384 = try JWS.sign(header: ["typ": "dpop+jwt", "jwk": JWK(publicKey: p384.publicKey).jsonValue],
                                 payloadBytes: JSONValue.object(["jti": "x", "htm": "POST", "htu": .string(url), "iat": .int(now),
                                                                 "nonce": .string(nonce)]).bytes, key: p384, algorithm: .ES384)
        XCTAssertThrowsError(try provider.verifyDPoPProof(es384, method: "POST", url: url, nonce: .required)) {
            XCTAssertEqual(($0 as? IssuanceError)?.codeValue, .invalidDPoPProof)
        }
        // Query and fragment of htu are ignored (§4.3 item 9); scheme and host case too.
        XCTAssertNoThrow(try provider.verifyDPoPProof(
            OAuthFixture.dpop(key, url: "HTTPS://Issuer.Example/pid-provider/token?x=1", at: now, nonce: nonce),
            method: "POST", url: url, nonce: .required))
    }

    /// RFC 9449 §4.3 item 9: htu matches without query and fragment, and with the scheme and
    /// host in any case (RFC 3986 §6.2.2.1); the path stays case-sensitive.
    func testHTUComparisonNormalizesSchemeAndHostOnly() throws {
        let provider = try OAuthFixture.make()
        let key = try PrivateKey(generatingFor: .ES256)
        let nonce = provider.dpopNonce()
        XCTAssertEqual(url, "https://issuer.example/pid-provider/token")
        for htu in ["HTTPS://Issuer.EXAMPLE/pid-provider/token", "https://issuer.example/pid-provider/token?x=1",
                    "https://issuer.example/pid-provider/token#f", "https://ISSUER.example/pid-provider/token?a=B#C"] {
            XCTAssertNoThrow(try provider.verifyDPoPProof(OAuthFixture.dpop(key, url: htu, at: now, nonce: nonce),
                                                          method: "POST", url: url, nonce: .required), htu)
        }
        for htu in ["https://issuer.example/PID-provider/token", "https://issuer.example/pid-provider/token/",
                    "https://issuer.example:8443/pid-provider/token", "https://issuer.examplé/pid-provider/token",
                    "https://issuer.example", "issuer.example/pid-provider/token", ""] {
            XCTAssertThrowsError(try provider.verifyDPoPProof(OAuthFixture.dpop(key, url: htu, at: now, nonce: nonce),
                                                              method: "POST", url: url, nonce: .required), htu) {
                XCTAssertEqual(($0 as? IssuanceError)?.codeValue, .invalidDPoPProof)
            }
        }
    }

    func testNonceRequiredAtTheTokenEndpointAndExpiring() throws {
        let clock = ManualClock(now)
        let provider = try OAuthFixture.make(clock: clock)
        let key = try PrivateKey(generatingFor: .ES256)
        for proof in [OAuthFixture.dpop(key, url: url, at: now), OAuthFixture.dpop(key, url: url, at: now, nonce: "made-up")] {
            XCTAssertThrowsError(try provider.verifyDPoPProof(proof, method: "POST", url: url, nonce: .required)) {
                let error = $0 as? IssuanceError
                XCTAssertEqual(error?.codeValue, .useDPoPNonce)
                XCTAssertEqual(error?.statusCode, 400)
                XCTAssertNotNil(error?.dpopNonce)
            }
        }
        // Without a nonce a proof is fine where nonces are optional.
        XCTAssertNoThrow(try provider.verifyDPoPProof(OAuthFixture.dpop(key, url: url, at: now), method: "POST", url: url,
                                                      nonce: .optional))
        let nonce = provider.dpopNonce()
        clock.advance(299)
        XCTAssertNoThrow(try provider.verifyDPoPProof(OAuthFixture.dpop(key, url: url, at: clock.now(), nonce: nonce),
                                                      method: "POST", url: url, nonce: .required))
        clock.advance(1)
        XCTAssertThrowsError(try provider.verifyDPoPProof(OAuthFixture.dpop(key, url: url, at: clock.now(), nonce: nonce),
                                                          method: "POST", url: url, nonce: .required)) {
            XCTAssertEqual(($0 as? IssuanceError)?.codeValue, .useDPoPNonce)
        }
        // Another issuer's nonce (other key material) is not ours.
        let stranger = try OAuthFixture.make(clock: clock)
        XCTAssertEqual(stranger.dpopNonce(), provider.dpopNonce(), "same issuer and secret: same stateless nonce")
    }

    /// The current second's nonce is kept (`dpopNonce()` makes it once): kept or made again it is
    /// the same value, a new second gives a new one, and the older one stays valid for its
    /// lifetime whichever second the memo holds.
    func testNonceOfEachSecondIsTheSameValueAndStaysValid() throws {
        let clock = ManualClock(now)
        let provider = try OAuthFixture.make(clock: clock)
        let key = try PrivateKey(generatingFor: .ES256)
        func accepted(_ nonce: String) -> Bool {
            (try? provider.verifyDPoPProof(OAuthFixture.dpop(key, url: url, at: clock.now(), nonce: nonce), method: "POST",
                                           url: url, nonce: .required)) != nil
        }
        let first = provider.dpopNonce()
        XCTAssertEqual(provider.dpopNonce(), first)
        XCTAssertEqual(try OAuthFixture.make(clock: clock).dpopNonce(), first, "the memo's value is the one the MAC gives")
        XCTAssertTrue(accepted(first))
        clock.advance(1)
        let second = provider.dpopNonce()
        XCTAssertNotEqual(second, first)
        XCTAssertTrue(accepted(first), "checked by its MAC once the memo moved on")
        XCTAssertTrue(accepted(second))
        clock.advance(298)
        XCTAssertTrue(accepted(first))
        clock.advance(1)
        XCTAssertFalse(accepted(first), "expired")
        XCTAssertTrue(accepted(second))
        clock.advance(1)
        XCTAssertFalse(accepted(second), "expired although the memo still holds it")
        XCTAssertFalse(accepted(String(second.dropLast()) + (second.hasSuffix("A") ? "B" : "A")))
    }

    /// The credential endpoint's check: DPoP-bound tokens need the DPoP scheme, a proof with the
    /// right `ath`, `htu`, and the bound key; Bearer tokens work only unbound.
    func testAccessGrantForDPoPAndBearerTokens() throws {
        let provider = try OAuthFixture.make()
        let key = try PrivateKey(generatingFor: .ES256)
        let credentialURL = provider.urls.credential
        let offer = try provider.createOffer(personaID: "erika", credentialConfigurationIDs: [OAuthFixture.sdJWT],
                                             grant: .preAuthorizedCode, txCode: false)
        let proof = try provider.verifyDPoPProof(OAuthFixture.dpop(key, url: url, at: now, nonce: provider.dpopNonce()),
                                                 method: "POST", url: url, nonce: .required)
        let body = try JSONValue.parse(provider.tokenResponse(
            Parameters(pairs: [("grant_type", PIDProvider.preAuthorizedGrantType), ("pre-authorized_code", offer.preAuthorizedCode!)]),
            client: ClientIdentity(clientID: nil, attested: false), dpop: proof))
        XCTAssertEqual(body["token_type"], "DPoP")
        let token = try XCTUnwrap(body["access_token"]?.stringValue)

        func request(_ scheme: String, _ dpop: String?) -> ResourceRequest {
            ResourceRequest(authorization: "\(scheme) \(token)", dpop: dpop, method: "POST", url: credentialURL)
        }
        let grant = try provider.accessGrant(for: request("DPoP", OAuthFixture.dpop(key, url: credentialURL, at: now, accessToken: token)))
        XCTAssertEqual(grant.personaID, "erika")
        XCTAssertEqual(grant.credentialConfigurationIDs, [OAuthFixture.sdJWT])
        XCTAssertEqual(grant.dpopThumbprint, proof.thumbprint)
        XCTAssertNil(grant.clientID)

        let other = try PrivateKey(generatingFor: .ES256)
        let cases: [(String, ResourceRequest, IssuanceError.Code, String?)] = [
            ("bearer use of a bound token", request("Bearer", nil), .invalidToken, "DPoP"),
            ("no proof", request("DPoP", nil), .invalidDPoPProof, "DPoP"),
            ("wrong ath", request("DPoP", OAuthFixture.dpop(key, url: credentialURL, at: now, accessToken: "other")), .invalidDPoPProof, "DPoP"),
            ("wrong htu", request("DPoP", OAuthFixture.dpop(key, url: url, at: now, accessToken: token)), .invalidDPoPProof, "DPoP"),
            ("other key", request("DPoP", OAuthFixture.dpop(other, url: credentialURL, at: now, accessToken: token)), .invalidToken, "DPoP"),
            ("stale nonce", request("DPoP", OAuthFixture.dpop(key, url: credentialURL, at: now, accessToken: token, nonce: "x")),
             .useDPoPNonce, "DPoP"),
            ("unknown token", ResourceRequest(authorization: "DPoP nope", dpop: nil, method: "POST", url: credentialURL), .invalidToken, "DPoP"),
            ("no header", ResourceRequest(authorization: nil, dpop: nil, method: "POST", url: credentialURL), .invalidToken, "Bearer"),
        ]
        for (name, resource, code, scheme) in cases {
            XCTAssertThrowsError(try provider.accessGrant(for: resource), name) {
                let error = $0 as? IssuanceError
                XCTAssertEqual(error?.codeValue, code, name)
                XCTAssertEqual(error?.authenticationScheme, scheme, name)
                if code == .invalidToken || code == .useDPoPNonce { XCTAssertEqual(error?.statusCode, 401, name) }
                if code == .useDPoPNonce { XCTAssertNotNil(error?.dpopNonce, name) }
            }
        }

        // A Bearer token (no DPoP at the token endpoint) works as Bearer only, and not when DPoP is required.
        let plainOffer = try provider.createOffer(personaID: "zoe", credentialConfigurationIDs: [OAuthFixture.mdoc],
                                                  grant: .preAuthorizedCode, txCode: false)
        let bearerBody = try JSONValue.parse(provider.tokenResponse(
            Parameters(pairs: [("grant_type", PIDProvider.preAuthorizedGrantType), ("pre-authorized_code", plainOffer.preAuthorizedCode!)]),
            client: ClientIdentity(clientID: nil, attested: false), dpop: nil))
        XCTAssertEqual(bearerBody["token_type"], "Bearer")
        let bearer = try XCTUnwrap(bearerBody["access_token"]?.stringValue)
        XCTAssertEqual(try provider.accessGrant(for: ResourceRequest(authorization: "Bearer \(bearer)", dpop: nil, method: "POST",
                                                                     url: credentialURL)).personaID, "zoe")
        XCTAssertThrowsError(try provider.accessGrant(for: ResourceRequest(
            authorization: "DPoP \(bearer)", dpop: OAuthFixture.dpop(key, url: credentialURL, at: now, accessToken: bearer),
            method: "POST", url: credentialURL))) { XCTAssertEqual(($0 as? IssuanceError)?.codeValue, .invalidToken) }
    }

    func testBearerRefusedWhenDPoPRequired() throws {
        let provider = try OAuthFixture.make { $0.requireDPoP = true }
        let offer = try provider.createOffer(personaID: "erika", credentialConfigurationIDs: [OAuthFixture.sdJWT],
                                             grant: .preAuthorizedCode, txCode: false)
        let form = Parameters(pairs: [("grant_type", PIDProvider.preAuthorizedGrantType), ("pre-authorized_code", offer.preAuthorizedCode!)])
        XCTAssertThrowsError(try provider.tokenResponse(form, client: ClientIdentity(clientID: nil, attested: false), dpop: nil)) {
            XCTAssertEqual(($0 as? IssuanceError)?.codeValue, .invalidDPoPProof)
        }
        XCTAssertThrowsError(try provider.accessGrant(for: ResourceRequest(authorization: "Bearer x", dpop: nil, method: "POST",
                                                                           url: provider.urls.credential))) {
            XCTAssertEqual(($0 as? IssuanceError)?.authenticationScheme, "DPoP")
        }
    }
}
