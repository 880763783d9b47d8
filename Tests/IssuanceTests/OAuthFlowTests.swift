import Cryptography
import Foundation
import HTTP
import Issuance
import JOSE
import JSON
import OAuth
import Store
import Support
import XCTest

/// PAR → authorize → login → token, and the pre-authorized grant, through the issuer's router.
final class OAuthFlowTests: XCTestCase {
    private let now = OAuthFixture.start
    private let redirect = "eu.trustbed.test-wallet:/callback"
    private let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

    private func parForm(_ client: OAuthFixture.Client, _ extra: [(String, String)] = [],
                         details: [String] = [OAuthFixture.sdJWT]) -> [(String, String)] {
        var form = [("response_type", "code"), ("client_id", client.clientID), ("redirect_uri", redirect),
                    ("code_challenge", PKCE.challenge(verifier: verifier)), ("code_challenge_method", "S256"), ("state", "st&1")]
        if !details.isEmpty {
            let json = JSONValue.array(details.map { ["type": "openid_credential", "credential_configuration_id": .string($0)] })
            form.append(("authorization_details", json.serialized()))
        }
        return form + extra
    }

    /// PAR with an attested client and a DPoP key; returns the request_uri.
    private func push(_ router: Router<String>, _ client: OAuthFixture.Client, dpopKey: PrivateKey? = nil,
                      _ extra: [(String, String)] = [], details: [String] = [OAuthFixture.sdJWT]) throws -> String {
        var headers = client.headers(at: now)
        if let dpopKey { headers["DPoP"] = OAuthFixture.dpop(dpopKey, url: OAuthFixture.issuer + "/par", at: now) }
        let response = OAuthFixture.send(router, .post, "/par", headers: headers, form: parForm(client, extra, details: details))
        XCTAssertEqual(response.status, .created, String(decoding: response.body, as: UTF8.self))
        XCTAssertEqual(response.header("cache-control"), "no-store")
        let body = try OAuthFixture.json(response)
        XCTAssertEqual(body["expires_in"], 90)
        return try XCTUnwrap(body["request_uri"]?.stringValue)
    }

    private func tokenRequest(_ router: Router<String>, _ provider: PIDProvider, _ form: [(String, String)],
                              client: OAuthFixture.Client?, dpopKey: PrivateKey?) -> HTTPResponse {
        var headers = client?.headers(at: now) ?? [:]
        if let dpopKey {
            headers["DPoP"] = OAuthFixture.dpop(dpopKey, url: OAuthFixture.issuer + "/token", at: now, nonce: provider.dpopNonce())
        }
        return OAuthFixture.send(router, .post, "/token", headers: headers, form: form)
    }

    func testAuthorizationCodeFlowWithLoginHintDPoPAndAttestation() throws {
        let provider = try OAuthFixture.make()
        let router = IssuanceRoutes(provider: provider).router()
        let client = OAuthFixture.Client(at: now)
        let dpopKey = try PrivateKey(generatingFor: .ES256)
        let requestURI = try push(router, client, dpopKey: dpopKey, details: [OAuthFixture.sdJWT, OAuthFixture.mdoc])
        XCTAssertTrue(requestURI.hasPrefix("urn:ietf:params:oauth:request_uri:"))

        let authorized = OAuthFixture.send(router, .get, "/authorize", query: Parameters(pairs: [
            ("client_id", client.clientID), ("request_uri", requestURI), ("login_hint", "zoe")]).encoded)
        XCTAssertEqual(authorized.status, .found)
        XCTAssertTrue(authorized.header("location")!.hasPrefix(redirect + "?"))
        let query = OAuthFixture.redirectQuery(authorized)
        XCTAssertEqual(query["state"], "st&1")
        XCTAssertEqual(query["iss"], OAuthFixture.issuer)
        let code = try XCTUnwrap(query["code"])
        // The request_uri was used up: no second code, and no redirect (400).
        let again = OAuthFixture.send(router, .get, "/authorize", query: Parameters(pairs: [
            ("client_id", client.clientID), ("request_uri", requestURI), ("login_hint", "zoe")]).encoded)
        XCTAssertEqual(again.status, .badRequest)
        XCTAssertNil(again.header("location"))

        let form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect), ("code_verifier", verifier),
                    ("client_id", client.clientID)]
        let response = tokenRequest(router, provider, form, client: client, dpopKey: dpopKey)
        XCTAssertEqual(response.status, .ok, String(decoding: response.body, as: UTF8.self))
        XCTAssertEqual(response.header("cache-control"), "no-store")
        XCTAssertNotNil(response.header("dpop-nonce"))
        let body = try OAuthFixture.json(response)
        XCTAssertEqual(body["token_type"], "DPoP")
        XCTAssertEqual(body["expires_in"], 3_600)
        let details = try XCTUnwrap(body["authorization_details"]?.arrayValue)
        XCTAssertEqual(details.compactMap { $0["credential_configuration_id"]?.stringValue }, [OAuthFixture.sdJWT, OAuthFixture.mdoc])
        let identifier = try XCTUnwrap(details[0]["credential_identifiers"]?.arrayValue?.first?.stringValue)
        XCTAssertNotEqual(identifier, OAuthFixture.sdJWT)
        XCTAssertNil(body["credential_previews"])

        let token = try XCTUnwrap(body["access_token"]?.stringValue)
        let grant = try provider.accessGrant(for: ResourceRequest(
            authorization: "DPoP " + token, dpop: OAuthFixture.dpop(dpopKey, url: provider.urls.credential, at: now, accessToken: token),
            method: "POST", url: provider.urls.credential))
        XCTAssertEqual(grant.personaID, "zoe")
        XCTAssertEqual(grant.clientID, client.clientID)
        XCTAssertEqual(grant.credentialIdentifiers[identifier], OAuthFixture.sdJWT)

        // Code replay.
        let replay = tokenRequest(router, provider, form, client: client, dpopKey: dpopKey)
        XCTAssertEqual(replay.status, .badRequest)
        XCTAssertEqual(try OAuthFixture.json(replay)["error"], "invalid_grant")
    }

    func testTokenRefusesWrongVerifierRedirectClientOrKey() throws {
        let provider = try OAuthFixture.make()
        let router = IssuanceRoutes(provider: provider).router()
        let client = OAuthFixture.Client(at: now)
        let dpopKey = try PrivateKey(generatingFor: .ES256)
        func code() throws -> String {
            let uri = try push(router, client, dpopKey: dpopKey)
            let r = OAuthFixture.send(router, .get, "/authorize", query: Parameters(pairs: [
                ("client_id", client.clientID), ("request_uri", uri), ("login_hint", "erika")]).encoded)
            return try XCTUnwrap(OAuthFixture.redirectQuery(r)["code"])
        }
        let other = OAuthFixture.Client(at: now)
        let cases: [(String, [(String, String)], OAuthFixture.Client, PrivateKey, String)] = [
            ("verifier", [("code_verifier", String(repeating: "a", count: 43)), ("redirect_uri", redirect), ("client_id", client.clientID)],
             client, dpopKey, "invalid_grant"),
            ("redirect", [("code_verifier", verifier), ("redirect_uri", redirect + "x"), ("client_id", client.clientID)],
             client, dpopKey, "invalid_grant"),
            ("client", [("code_verifier", verifier), ("redirect_uri", redirect), ("client_id", other.clientID)],
             other, dpopKey, "invalid_grant"),
            ("dpop key", [("code_verifier", verifier), ("redirect_uri", redirect), ("client_id", client.clientID)],
             client, try PrivateKey(generatingFor: .ES256), "invalid_dpop_proof"),
        ]
        for (name, extra, who, key, error) in cases {
            let response = tokenRequest(router, provider, [("grant_type", "authorization_code"), ("code", try code())] + extra,
                                        client: who, dpopKey: key)
            XCTAssertEqual(try OAuthFixture.json(response)["error"]?.stringValue, error, name)
        }
    }

    func testParRefusesBadRequests() throws {
        let provider = try OAuthFixture.make()
        let router = IssuanceRoutes(provider: provider).router()
        let client = OAuthFixture.Client(at: now)
        let cases: [(String, [(String, String)], String)] = [
            ("plain", parForm(client).filter { $0.0 != "code_challenge_method" } + [("code_challenge_method", "plain")], "invalid_request"),
            ("no pkce", parForm(client).filter { !$0.0.hasPrefix("code_challenge") }, "invalid_request"),
            ("response_type", parForm(client).filter { $0.0 != "response_type" } + [("response_type", "token")], "unsupported_response_type"),
            ("details", parForm(client, details: []) + [("authorization_details", #"[{"type":"x"}]"#)], "invalid_authorization_details"),
            ("unknown config", parForm(client, details: ["nope"]), "invalid_authorization_details"),
            ("nothing asked", parForm(client, details: []), "invalid_scope"),
            ("issuer_state", parForm(client, [("issuer_state", "nope")]), "invalid_request"),
            ("fragment", parForm(client).filter { $0.0 != "redirect_uri" } + [("redirect_uri", "https://w.example/cb#x")], "invalid_request"),
            ("client_id mismatch", parForm(client).filter { $0.0 != "client_id" } + [("client_id", "someone-else")], "invalid_client"),
        ]
        for (name, form, error) in cases {
            let response = OAuthFixture.send(router, .post, "/par", headers: client.headers(at: now), form: form)
            XCTAssertEqual(try OAuthFixture.json(response)["error"]?.stringValue, error, name)
            XCTAssertTrue(response.status == .badRequest || response.status == .unauthorized, name)
        }
        // A public (unattested) client may use neither a custom scheme nor an unregistered https
        // URI (RFC 9700 §4.11); a loopback one is fine (RFC 8252 §7.3).
        let publicForm = parForm(client)
        let refused = OAuthFixture.send(router, .post, "/par", form: publicForm)
        XCTAssertEqual(try OAuthFixture.json(refused)["error"], "invalid_request")
        let https = publicForm.filter { $0.0 != "redirect_uri" } + [("redirect_uri", "https://wallet.example/cb")]
        XCTAssertEqual(try OAuthFixture.json(OAuthFixture.send(router, .post, "/par", form: https))["error"], "invalid_request")
        let loopback = publicForm.filter { $0.0 != "redirect_uri" } + [("redirect_uri", "http://127.0.0.1:4711/cb")]
        XCTAssertEqual(OAuthFixture.send(router, .post, "/par", form: loopback).status, .created)
        // With attestation required, the public client is refused.
        let strict = IssuanceRoutes(provider: try OAuthFixture.make { $0.requireClientAttestation = true }).router()
        XCTAssertEqual(OAuthFixture.send(strict, .post, "/par", form: loopback).status, .unauthorized)
    }

    func testLoginPageAndFormPost() throws {
        let provider = try OAuthFixture.make()
        let router = IssuanceRoutes(provider: provider).router()
        let client = OAuthFixture.Client(at: now)
        let uri = try push(router, client)
        let page = OAuthFixture.send(router, .get, "/authorize", query: Parameters(pairs: [
            ("client_id", client.clientID), ("request_uri", uri)]).encoded)
        XCTAssertEqual(page.status, .ok)
        XCTAssertNotNil(page.header("content-security-policy"))
        let html = String(decoding: page.body, as: UTF8.self)
        XCTAssertTrue(html.contains(#"value="erika""#) && html.contains(#"value="zoe""#))
        XCTAssertTrue(html.contains("Zoë Ðorđević"))
        XCTAssertFalse(html.contains("1984-01-26"), "the page shows id and name only")
        XCTAssertTrue(html.contains(#"action="\#(OAuthFixture.issuer)/login""#))

        let unknown = OAuthFixture.send(router, .post, "/login", form: [("request_uri", uri), ("client_id", client.clientID),
                                                                        ("persona", "nobody")])
        XCTAssertEqual(unknown.status, .seeOther)
        XCTAssertEqual(OAuthFixture.redirectQuery(unknown)["error"], "access_denied")
        XCTAssertEqual(OAuthFixture.redirectQuery(unknown)["iss"], OAuthFixture.issuer)

        let chosen = OAuthFixture.send(router, .post, "/login", form: [("request_uri", uri), ("client_id", client.clientID),
                                                                       ("persona", "erika")])
        XCTAssertEqual(chosen.status, .seeOther)
        XCTAssertNotNil(OAuthFixture.redirectQuery(chosen)["code"])
        let twice = OAuthFixture.send(router, .post, "/login", form: [("request_uri", uri), ("client_id", client.clientID),
                                                                      ("persona", "erika")])
        XCTAssertEqual(twice.status, .badRequest)
        // Another client cannot use the request_uri (RFC 9126 §4).
        let uri2 = try push(router, client)
        let stolen = OAuthFixture.send(router, .get, "/authorize", query: Parameters(pairs: [
            ("client_id", "another"), ("request_uri", uri2), ("login_hint", "erika")]).encoded)
        XCTAssertEqual(stolen.status, .badRequest)
    }

    func testIssuerStateTiesLoginToTheOfferPersona() throws {
        let provider = try OAuthFixture.make()
        let router = IssuanceRoutes(provider: provider).router()
        let offer = try provider.createOffer(personaID: "zoe", credentialConfigurationIDs: [OAuthFixture.sdJWT],
                                             grant: .authorizationCode, txCode: false)
        let client = OAuthFixture.Client(at: now)
        let uri = try push(router, client, [("issuer_state", offer.issuerState!)], details: [])
        let page = OAuthFixture.send(router, .get, "/authorize", query: Parameters(pairs: [
            ("client_id", client.clientID), ("request_uri", uri)]).encoded)
        let html = String(decoding: page.body, as: UTF8.self)
        XCTAssertTrue(html.contains(#"value="zoe""#) && !html.contains(#"value="erika""#))
        let wrong = OAuthFixture.send(router, .get, "/authorize", query: Parameters(pairs: [
            ("client_id", client.clientID), ("request_uri", uri), ("login_hint", "erika")]).encoded)
        XCTAssertEqual(OAuthFixture.redirectQuery(wrong)["error"], "access_denied")
    }

    /// OpenID4VCI §5.1.1: members of an `openid_credential` detail the issuer does not know are
    /// ignored (at PAR and at the token endpoint); the ones it knows are still checked.
    func testAuthorizationDetailsIgnoreUnknownMembers() throws {
        let provider = try OAuthFixture.make()
        let router = IssuanceRoutes(provider: provider).router()
        let client = OAuthFixture.Client(at: now)
        let extra = #"[{"type":"openid_credential","credential_configuration_id":"\#(OAuthFixture.sdJWT)","#
            + #""future_member":{"x":[1]},"format":"dc+sd-jwt","claims":[{"path":["given_name"],"mandatory":true,"z":1}]}]"#
        let accepted = OAuthFixture.send(router, .post, "/par", headers: client.headers(at: now),
                                         form: parForm(client, details: []) + [("authorization_details", extra)])
        XCTAssertEqual(accepted.status, .created, String(decoding: accepted.body, as: UTF8.self))
        let bad: [String] = [
            #"[{"type":"openid_credential","credential_configuration_id":"\#(OAuthFixture.sdJWT)","claims":[]}]"#,
            #"[{"type":"openid_credential","credential_configuration_id":"\#(OAuthFixture.sdJWT)","claims":[{"path":[-1]}]}]"#,
            #"[{"type":"openid_credential","credential_configuration_id":"\#(OAuthFixture.sdJWT)","claims":[{"path":["a"],"mandatory":"yes"}]}]"#,
            #"[{"type":"openid_credential","credential_configuration_id":"\#(OAuthFixture.sdJWT)","locations":["https://other.example"]}]"#,
            #"[{"type":"openid_credential","credential_configuration_id":7}]"#,
        ]
        for text in bad {
            let response = OAuthFixture.send(router, .post, "/par", headers: client.headers(at: now),
                                             form: parForm(client, details: []) + [("authorization_details", text)])
            XCTAssertEqual(try OAuthFixture.json(response)["error"], "invalid_authorization_details", text)
        }
        let offer = try provider.createOffer(personaID: "erika", credentialConfigurationIDs: [OAuthFixture.sdJWT],
                                             grant: .preAuthorizedCode, txCode: false)
        let token = tokenRequest(router, provider, [("grant_type", PIDProvider.preAuthorizedGrantType),
                                                    ("pre-authorized_code", offer.preAuthorizedCode!),
                                                    ("authorization_details", extra)], client: nil, dpopKey: nil)
        XCTAssertEqual(token.status, .ok, String(decoding: token.body, as: UTF8.self))
        let details = try XCTUnwrap(try OAuthFixture.json(token)["authorization_details"]?.arrayValue)
        XCTAssertEqual(details.first?["credential_configuration_id"]?.stringValue, OAuthFixture.sdJWT)
        XCTAssertNil(details.first?["future_member"], "the response lists what was issued, not the unknown member")
    }

    /// The token is stored in the transaction that redeems the code; asking for more than the
    /// offer still burns the code (and stores no token).
    func testPreAuthorizedRefusalAfterRedemptionBurnsTheCode() throws {
        let provider = try OAuthFixture.make()
        let router = IssuanceRoutes(provider: provider).router()
        let offer = try provider.createOffer(personaID: "erika", credentialConfigurationIDs: [OAuthFixture.sdJWT],
                                             grant: .preAuthorizedCode, txCode: false)
        let details = #"[{"type":"openid_credential","credential_configuration_id":"\#(OAuthFixture.mdoc)"}]"#
        let form = [("grant_type", PIDProvider.preAuthorizedGrantType), ("pre-authorized_code", offer.preAuthorizedCode!)]
        let refused = tokenRequest(router, provider, form + [("authorization_details", details)], client: nil, dpopKey: nil)
        XCTAssertEqual(try OAuthFixture.json(refused)["error"], "invalid_authorization_details")
        let again = tokenRequest(router, provider, form, client: nil, dpopKey: nil)
        XCTAssertEqual(try OAuthFixture.json(again)["error"], "invalid_grant", "the refused request burnt the code")
        XCTAssertEqual(try provider.database.query("SELECT COUNT(*) AS n FROM issuance_tokens").first?.int("n"), 0)

        let fresh = try provider.createOffer(personaID: "erika", credentialConfigurationIDs: [OAuthFixture.sdJWT],
                                             grant: .preAuthorizedCode, txCode: false)
        let ok = tokenRequest(router, provider, [("grant_type", PIDProvider.preAuthorizedGrantType),
                                                 ("pre-authorized_code", fresh.preAuthorizedCode!)], client: nil, dpopKey: nil)
        XCTAssertEqual(ok.status, .ok, String(decoding: ok.body, as: UTF8.self))
        XCTAssertEqual(try provider.database.query("SELECT COUNT(*) AS n FROM issuance_tokens").first?.int("n"), 1)
    }

    func testPreAuthorizedGrantWithTxCodeAndPreviews() throws {
        let provider = try OAuthFixture.make { $0.tokenClaimsPreview = true }
        let router = IssuanceRoutes(provider: provider).router()
        let offer = try provider.createOffer(personaID: "erika", credentialConfigurationIDs: [OAuthFixture.sdJWT, OAuthFixture.mdoc],
                                             grant: .preAuthorizedCode, txCode: true)
        let code = offer.preAuthorizedCode!
        let wrongTx = offer.txCode == "000000" ? "111111" : "000000"
        for attempt in 1...5 {
            let r = tokenRequest(router, provider, [("grant_type", PIDProvider.preAuthorizedGrantType), ("pre-authorized_code", code),
                                                    ("tx_code", wrongTx)], client: nil, dpopKey: nil)
            XCTAssertEqual(try OAuthFixture.json(r)["error"], "invalid_grant", "attempt \(attempt)")
        }
        // Dead after five failures, even with the right tx_code.
        let dead = tokenRequest(router, provider, [("grant_type", PIDProvider.preAuthorizedGrantType), ("pre-authorized_code", code),
                                                   ("tx_code", offer.txCode!)], client: nil, dpopKey: nil)
        XCTAssertEqual(try OAuthFixture.json(dead)["error"], "invalid_grant")

        let fresh = try provider.createOffer(personaID: "erika", credentialConfigurationIDs: [OAuthFixture.sdJWT, OAuthFixture.mdoc],
                                             grant: .preAuthorizedCode, txCode: true)
        let ok = tokenRequest(router, provider, [("grant_type", PIDProvider.preAuthorizedGrantType),
                                                 ("pre-authorized_code", fresh.preAuthorizedCode!), ("tx_code", fresh.txCode!)],
                              client: nil, dpopKey: try PrivateKey(generatingFor: .ES256))
        XCTAssertEqual(ok.status, .ok, String(decoding: ok.body, as: UTF8.self))
        let body = try OAuthFixture.json(ok)
        XCTAssertEqual(body.bytes, ok.body, "the previews copied in (TokenResponseBody) give the JSON writer's own bytes")
        XCTAssertEqual(body["token_type"], "DPoP")
        XCTAssertNil(body["authorization_details"])
        let previews = try XCTUnwrap(body["credential_previews"]?.arrayValue)
        XCTAssertEqual(previews.compactMap { $0["credential_configuration_id"]?.stringValue }, [OAuthFixture.sdJWT, OAuthFixture.mdoc])
        XCTAssertEqual(previews[0]["format"], "dc+sd-jwt")
        XCTAssertEqual(previews[0]["claims"]?["given_name"], "Erika")

        let bad = tokenRequest(router, provider, [("grant_type", "password")], client: nil, dpopKey: nil)
        XCTAssertEqual(try OAuthFixture.json(bad)["error"], "unsupported_grant_type")
    }

    func testFiftyConcurrentRedemptionsOfOneCodeHaveOneWinner() throws {
        let path = NSTemporaryDirectory() + "trustbed-oauth-race-\(getpid())-\(UUID().uuidString).sqlite"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let provider = try OAuthFixture.make(database: try Database(path: path, durability: .processCrash))
        let router = IssuanceRoutes(provider: provider).router()
        let client = OAuthFixture.Client(at: now)
        let uri = try push(router, client)
        let r = OAuthFixture.send(router, .get, "/authorize", query: Parameters(pairs: [
            ("client_id", client.clientID), ("request_uri", uri), ("login_hint", "erika")]).encoded)
        let code = try XCTUnwrap(OAuthFixture.redirectQuery(r)["code"])
        let offer = try provider.createOffer(personaID: "erika", credentialConfigurationIDs: [OAuthFixture.sdJWT],
                                             grant: .preAuthorizedCode, txCode: false)
        // Headers are made up front (each with its own PoP and proof jti), then sent at once.
        let codeRequests = (0..<50).map { _ in
            (client.headers(at: now), [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect),
                                       ("code_verifier", verifier), ("client_id", client.clientID)])
        }
        let preAuthForm = [("grant_type", PIDProvider.preAuthorizedGrantType), ("pre-authorized_code", offer.preAuthorizedCode!)]
        for requests in [codeRequests, (0..<50).map { _ in ([String: String](), preAuthForm) }] {
            let wins = Locked(0)
            DispatchQueue.concurrentPerform(iterations: requests.count) { i in
                let response = OAuthFixture.send(router, .post, "/token", headers: requests[i].0, form: requests[i].1)
                if response.status == .ok { wins.withLock { $0 += 1 } }
            }
            XCTAssertEqual(wins.current, 1)
        }
    }
}
