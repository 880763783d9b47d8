import Cryptography
import JOSE
import JSON
import SDJWT
import Store
import Support
@testable import Verification
import XCTest

final class VerifierResponseTests: XCTestCase {
    private let names: Set<String> = ["given_name", "family_name", "birthdate"]

    private func refusal(_ body: () throws -> Void) -> VerificationError? {
        do { try body(); return nil } catch let error as VerificationError { return error } catch {
            XCTFail("unexpected \(error)"); return nil
        }
    }

    private func stored(_ f: VerifierFixture, _ request: PresentationRequestRecord) throws -> JSONValue {
        f.verifier.requestResult(try XCTUnwrap(f.verifier.request(id: request.id)))
    }

    private func failedCheck(_ result: JSONValue) -> (name: String, detail: String)? {
        guard let check = result["checks"]?.arrayValue?.first(where: { $0["ok"] == .bool(false) }) else { return nil }
        return (check["name"]?.stringValue ?? "", check["detail"]?.stringValue ?? "")
    }

    func testRequestObjectIsSignedByTheAccessCertificateForEachPrefix() throws {
        let f = try VerifierFixture.make()
        for prefix in ClientIDPrefix.allCases {
            let request = try f.request(prefix: prefix)
            let (jws, claims) = try JWS.parseClaims(try f.verifier.requestObject(id: request.id))
            XCTAssertEqual(jws.type, "oauth-authz-req+jwt")
            try jws.verify(keys: JWKSet(keys: [f.verifier.keys.signingJWK]), allowList: [.ES256], expectedType: "oauth-authz-req+jwt",
                           requireKeyID: false)
            XCTAssertEqual(claims["client_id"]?.stringValue, request.clientID)
            XCTAssertEqual(claims["nonce"]?.stringValue, request.nonce)
            XCTAssertEqual(claims["state"]?.stringValue, request.state)
            XCTAssertEqual(claims["response_uri"]?.stringValue, VerifierFixture.entityID + "/response")
            switch prefix {
            case .x509Hash:
                XCTAssertEqual(request.clientID, "x509_hash:" + Base64URL.encode(Digest.sha256(f.verifier.keys.signer.der)))
                XCTAssertEqual(jws.header["x5c"], JSONValue(f.verifier.keys.x5c))
            case .x509SANDNS:
                XCTAssertEqual(request.clientID, "x509_san_dns:rp.example.org")
                XCTAssertTrue(f.verifier.keys.signer.subjectAlternativeNames?.contains(.dns("rp.example.org")) ?? false)
            case .openidFederation:
                XCTAssertEqual(request.clientID, "openid_federation:" + VerifierFixture.entityID)
                XCTAssertEqual(jws.header["trust_chain"], ["ec-of-rp", "ec-of-ta"])
                XCTAssertEqual(jws.keyID, f.verifier.keys.signingJWK.kid)
                XCTAssertNil(claims["client_metadata"])
            }
        }
        let link = f.verifier.requestLink(try f.request())
        XCTAssertTrue(link.hasPrefix("openid4vp://?client_id=x509_hash%3A"), link)
    }

    func testVerifiedDirectPostAndSameDeviceRedirect() throws {
        let f = try VerifierFixture.make()
        let holder = try PrivateKey(generatingFor: .ES256)
        let credential = try f.issuer.issue(holder: holder, now: f.clock.now())
        let request = try f.request(redirectURI: "https://rp.example.org/done")
        let token = try f.present(credential, holder: holder, names: names, audience: request.clientID, nonce: request.nonce)
        let ack = try f.verifier.receiveResponse(form: VerifierFixture.form(state: request.state, vpToken: ["pid": [.string(token)]]))
        XCTAssertTrue(ack.redirectURI?.hasPrefix("https://rp.example.org/done#response_code=") ?? false)
        let result = try stored(f, request)
        XCTAssertEqual(result["state"], "verified", "\(result)")
        XCTAssertEqual(result["claims"]?["pid"]?["family_name"], "Mustermann")
        XCTAssertNil(result["claims"]?["pid"]?["cnf"])
        XCTAssertNil(result["claims"]?["pid"]?["address"])
        // Replayed: the request is answered.
        let replay = refusal { _ = try f.verifier.receiveResponse(form: VerifierFixture.form(state: request.state, vpToken: ["pid": [.string(token)]])) }
        XCTAssertTrue(replay?.description.contains("already answered") ?? false)
        let foreign = refusal { _ = try f.verifier.receiveResponse(form: VerifierFixture.form(state: "other", vpToken: ["pid": [.string(token)]])) }
        XCTAssertTrue(foreign?.description.contains("foreign") ?? false)
    }

    func testVerifiedEncryptedResponse() throws {
        let f = try VerifierFixture.make()
        let holder = try PrivateKey(generatingFor: .ES256)
        let credential = try f.issuer.issue(holder: holder, now: f.clock.now())
        let request = try f.request(mode: .directPostJWT)
        let token = try f.present(credential, holder: holder, names: names, audience: request.clientID, nonce: request.nonce)
        let plaintext: JSONValue = ["vp_token": ["pid": [.string(token)]], "state": .string(request.state)]
        let jwe = try JWE.encrypt(plaintext.bytes, to: f.verifier.keys.encryptionJWK, encryption: .A256GCM)
        _ = try f.verifier.receiveResponse(form: [("response", jwe)])
        XCTAssertEqual(try stored(f, request)["state"], "verified")
        // A plain answer to an encrypted request is refused and recorded.
        let plain = try f.request(mode: .directPostJWT)
        let token2 = try f.present(credential, holder: holder, names: names, audience: plain.clientID, nonce: plain.nonce)
        XCTAssertNotNil(refusal { _ = try f.verifier.receiveResponse(form: VerifierFixture.form(state: plain.state, vpToken: ["pid": [.string(token2)]])) })
        XCTAssertEqual(failedCheck(try stored(f, plain))?.name, "response_mode")
    }

    func testEachCheckRefusesWithItsReason() throws {
        let f = try VerifierFixture.make()
        let holder = try PrivateKey(generatingFor: .ES256)
        let credential = try f.issuer.issue(holder: holder, now: f.clock.now())
        func run(_ names: Set<String>, audience: String? = nil, nonce: String? = nil, template: DCQLTemplate = .nameAndBirthDate,
                 credential override: SDJWT? = nil) throws -> (name: String, detail: String)? {
            let request = try f.request(template)
            let token = try f.present(override ?? credential, holder: holder, names: names, audience: audience ?? request.clientID,
                                      nonce: nonce ?? request.nonce)
            XCTAssertNotNil(refusal { _ = try f.verifier.receiveResponse(form: VerifierFixture.form(state: request.state, vpToken: ["pid": [.string(token)]])) })
            return failedCheck(try stored(f, request))
        }
        var failed = try run(names, nonce: "wrong")
        XCTAssertEqual(failed?.name, "pid.key_binding"); XCTAssertTrue(failed?.detail.contains("nonce") ?? false)
        failed = try run(names, audience: "x509_hash:other")
        XCTAssertEqual(failed?.name, "pid.key_binding"); XCTAssertTrue(failed?.detail.contains("aud") ?? false)
        failed = try run(names.union(["nationalities"]))
        XCTAssertEqual(failed?.name, "pid.claims"); XCTAssertTrue(failed?.detail.contains("discloses nationalities") ?? false, "\(failed!)")
        failed = try run(["given_name"])
        XCTAssertEqual(failed?.name, "pid.claims"); XCTAssertTrue(failed?.detail.contains("missing") ?? false)
        let other = try f.issuer.issue(holder: holder, now: f.clock.now(), vct: "urn:other")
        failed = try run(names, credential: other)
        XCTAssertEqual(failed?.name, "pid.credential_type")
        f.statusLists.revoked.withLock { $0 = [3] }
        failed = try run(names)
        XCTAssertEqual(failed?.name, "pid.status"); XCTAssertTrue(failed?.detail.contains("INVALID") ?? false, "\(failed!)")
    }

    func testUntrustedIssuerAndExpiredRequest() throws {
        let f = try VerifierFixture.make(refuseIssuer: true)
        let holder = try PrivateKey(generatingFor: .ES256)
        let credential = try f.issuer.issue(holder: holder, now: f.clock.now())
        let request = try f.request()
        let token = try f.present(credential, holder: holder, names: names, audience: request.clientID, nonce: request.nonce)
        XCTAssertNotNil(refusal { _ = try f.verifier.receiveResponse(form: VerifierFixture.form(state: request.state, vpToken: ["pid": [.string(token)]])) })
        let failed = failedCheck(try stored(f, request))
        XCTAssertEqual(failed?.name, "pid.issuer_trust")
        XCTAssertTrue(failed?.detail.contains("is not trusted") ?? false)

        let late = try f.request()
        f.clock.advance(f.verifier.configuration.requestLifetime + 1)
        let error = refusal { _ = try f.verifier.receiveResponse(form: VerifierFixture.form(state: late.state, vpToken: ["pid": ["x"]])) }
        XCTAssertTrue(error?.description.contains("expired") ?? false)
        XCTAssertEqual(try stored(f, late)["state"], "refused")
        XCTAssertEqual(refusal { _ = try f.verifier.requestObject(id: late.id) }?.codeValue, .notFound)
    }

    func testStatusListIsCachedWithinItsTTL() throws {
        let f = try VerifierFixture.make()
        let keys = JWKSet(keys: [f.issuer.jwk])
        XCTAssertFalse(try f.verifier.statusLists.token(uri: TestIssuer.statusURI, keys: keys, now: f.clock.now()).cached)
        XCTAssertTrue(try f.verifier.statusLists.token(uri: TestIssuer.statusURI, keys: keys, now: f.clock.now() + 59).cached)
        XCTAssertEqual(f.statusLists.fetches.current, 1)
        XCTAssertFalse(try f.verifier.statusLists.token(uri: TestIssuer.statusURI, keys: keys, now: f.clock.now() + 61).cached)
        XCTAssertEqual(f.statusLists.fetches.current, 2)
        // Other keys: the cached token is not taken on their word.
        let stranger = JWKSet(keys: [JWK(publicKey: try PrivateKey(generatingFor: .ES256).publicKey)])
        XCTAssertThrowsError(try f.verifier.statusLists.token(uri: TestIssuer.statusURI, keys: stranger, now: f.clock.now()))
    }
}
