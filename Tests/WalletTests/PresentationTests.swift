import Cryptography
import Foundation
import JOSE
import JSON
import SDJWT
import Support
@testable import Wallet
import XCTest

/// The wallet side of OpenID4VP 1.0 (`wallet present`): request objects checked by client
/// identifier prefix, DCQL selection that discloses only what is asked (honouring `values`),
/// and the answer: KB-JWT bound to the request, encrypted for direct_post.jwt.
final class PresentationTests: XCTestCase {
    private let now = Int64(Date().timeIntervalSince1970)
    private let issuerKey = try! PrivateKey(generatingFor: .ES256)

    private func wallet(holder: HolderKey) throws -> TestWalletFile {
        let claims: [String: JSONValue] = [
            "iss": "https://pid.example", "vct": "urn:eudi:pid:1", "iat": .int(now),
            "given_name": "Erika", "family_name": "Mustermann", "nationalities": ["DE", "NL"],
            "address": ["locality": "Berlin", "country": "DE"], "cnf": ["jwk": .object(holder.jwk)],
        ]
        let plan = DisclosurePlan.object([
            "given_name": .disclosable, "family_name": .disclosable, "nationalities": .disclosable(.array(.disclosable)),
            "address": .disclosable(.object(["locality": .disclosable, "country": .disclosable])),
        ])
        let credential = try SDJWTIssuer(key: issuerKey, algorithm: .ES256).issue(claims: claims, plan: plan)
        var file = TestWalletFile(path: "/nonexistent/wallet.json")
        file.credentials = [["format": "dc+sd-jwt", "credential": .string(credential.serialized), "holder_key": .object(try holder.privateJWK())]]
        return file
    }

    private func query(_ paths: [[JSONValue]], values: [JSONValue]? = nil, vct: String = "urn:eudi:pid:1") -> JSONValue {
        let claims: [JSONValue] = paths.map { path in
            var claim: [String: JSONValue] = ["path": .array(path)]
            if let values { claim["values"] = .array(values) }
            return .object(claim)
        }
        return ["credentials": [["id": "pid", "format": "dc+sd-jwt", "meta": ["vct_values": [.string(vct)]], "claims": .array(claims)]]]
    }

    func testSelectionDisclosesOnlyTheRequestedClaimsAndTheirParents() throws {
        let file = try wallet(holder: try HolderKey())
        let selected = try PresentationSelection.select(query([["given_name"], ["address", "locality"]]), from: file)
        XCTAssertEqual(selected.count, 1)
        XCTAssertEqual(Set(selected[0].disclosed), ["given_name", "address", "address.locality"])
        guard case .sdJWT(let presentation, _) = selected[0].content else { return XCTFail("not an SD-JWT") }
        XCTAssertEqual(presentation.disclosures.count, 3)
        XCTAssertNil(presentation.keyBindingJWT)

        // null selects every array element (§7.1): both nationalities and the array's disclosure.
        let all = try PresentationSelection.select(query([["nationalities", .null]]), from: file)
        XCTAssertEqual(Set(all[0].disclosed), ["nationalities", "nationalities[0]", "nationalities[1]"])
    }

    func testValuesAndTypesDecideWhetherACredentialMatches() throws {
        let file = try wallet(holder: try HolderKey())
        XCTAssertNoThrow(try PresentationSelection.select(query([["given_name"]], values: ["Max", "Erika"]), from: file))
        XCTAssertThrowsError(try PresentationSelection.select(query([["given_name"]], values: ["Max"]), from: file)) {
            XCTAssertTrue("\($0)".contains("not one of the requested values"), "\($0)")
        }
        XCTAssertThrowsError(try PresentationSelection.select(query([["bsn"]]), from: file)) {
            XCTAssertTrue("\($0)".contains("no claim bsn"), "\($0)")
        }
        XCTAssertThrowsError(try PresentationSelection.select(query([["given_name"]], vct: "urn:eudi:pid:nl:1"), from: file)) {
            XCTAssertTrue("\($0)".contains("answers the query pid"), "\($0)")
        }
        let mdoc: JSONValue = ["credentials": [["id": "m", "format": "mso_mdoc", "meta": ["doctype_value": "x"]]]]
        XCTAssertThrowsError(try PresentationSelection.select(mdoc, from: file)) {
            XCTAssertTrue("\($0)".contains("holds no mso_mdoc credential"), "\($0)")
        }
        XCTAssertThrowsError(try PresentationSelection.select(["credentials": [], "credential_sets": []], from: file))
    }

    // MARK: request objects

    private struct Verifier {
        let caKey: PrivateKey
        let ca: Certificate
        let key: PrivateKey
        let leaf: Certificate
        var x5c: [String] { [Data(leaf.der).base64EncodedString()] }
        var hash: String { Base64URL.encode(Digest.sha256(leaf.der)) }
    }

    private func verifier(dns: String = "rp.example") throws -> Verifier {
        let caKey = try PrivateKey(generatingFor: .ES256)
        let ca = try CertificateBuilder(
            subject: DistinguishedName(country: "NL", organization: "T", commonName: "Root"), subjectKey: caKey.publicKey,
            notBefore: now - 3_600, notAfter: now + 86_400,
            extensions: [.basicConstraints(isCA: true, pathLength: 0), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier]
        ).selfSign(with: caKey)
        let key = try PrivateKey(generatingFor: .ES256)
        let leaf = try CertificateBuilder(
            subject: DistinguishedName(country: "NL", organization: "T", commonName: dns), subjectKey: key.publicKey,
            notBefore: now - 3_600, notAfter: now + 86_400,
            extensions: [.basicConstraints(isCA: false, pathLength: nil), .keyUsage([.digitalSignature]), .subjectKeyIdentifier,
                         .authorityKeyIdentifier, .subjectAlternativeName([.dns(dns)])]
        ).sign(issuer: ca, key: caKey)
        return Verifier(caKey: caKey, ca: ca, key: key, leaf: leaf)
    }

    private func requestObject(_ v: Verifier, clientID: String, typ: String = "oauth-authz-req+jwt", mode: String = "direct_post",
                               responseURI: String = "https://rp.example/response", encryptionKey: PrivateKey? = nil) throws -> String {
        var metadata: [String: JSONValue] = [:]
        if let encryptionKey {
            var jwk = JWK(publicKey: encryptionKey.publicKey, use: "enc").json
            jwk["alg"] = "ECDH-ES"
            metadata = ["jwks": ["keys": [.object(jwk)]], "encrypted_response_enc_values_supported": ["A256GCM"]]
        }
        let claims: [String: JSONValue] = [
            "client_id": .string(clientID), "response_type": "vp_token", "response_mode": .string(mode), "response_uri": .string(responseURI),
            "nonce": "n-1", "state": "s-1", "dcql_query": query([["given_name"]]), "client_metadata": .object(metadata),
            "iat": .int(now), "exp": .int(now + 300),
        ]
        return try JWS.sign(header: ["typ": .string(typ), "x5c": JSONValue(v.x5c)], payloadBytes: JSONValue.object(claims).bytes,
                            key: v.key, algorithm: .ES256)
    }

    func testRequestObjectsAreCheckedByTheirClientIdentifierPrefix() throws {
        let v = try verifier()
        let hashID = "x509_hash:" + v.hash
        let request = try PresentationRequest.verify(try requestObject(v, clientID: hashID), linkClientID: hashID, verifierRoots: [v.ca],
                                                     federation: nil)
        XCTAssertEqual(request.nonce, "n-1")
        XCTAssertEqual(request.state, "s-1")
        XCTAssertTrue(request.checks.contains { $0.contains("trusted verifier root") }, "\(request.checks)")
        XCTAssertNoThrow(try PresentationRequest.verify(try requestObject(v, clientID: "x509_san_dns:rp.example"),
                                                        linkClientID: "x509_san_dns:rp.example", verifierRoots: nil, federation: nil))

        func refused(_ compact: String, _ clientID: String, roots: [Certificate]? = nil, _ words: String) {
            XCTAssertThrowsError(try PresentationRequest.verify(compact, linkClientID: clientID, verifierRoots: roots, federation: nil)) {
                XCTAssertTrue("\($0)".contains(words), "\($0) lacks \(words)")
            }
        }
        let other = try verifier()
        refused(try requestObject(v, clientID: "x509_hash:" + other.hash), "x509_hash:" + other.hash, "x509_hash")
        refused(try requestObject(v, clientID: "x509_san_dns:evil.example"), "x509_san_dns:evil.example", "no dNSName evil.example")
        refused(try requestObject(v, clientID: hashID), hashID, roots: [other.ca], "does not chain")
        refused(try requestObject(v, clientID: hashID), "x509_hash:other", "not the link's")
        refused(try requestObject(v, clientID: hashID, typ: "JWT"), hashID, "signature")
        refused(try requestObject(v, clientID: "x509_san_dns:rp.example", responseURI: "https://evil.example/r"), "x509_san_dns:rp.example",
                "response_uri host")
        refused(try requestObject(v, clientID: "redirect_uri:https://rp.example"), "redirect_uri:https://rp.example", "not supported")
        refused(try requestObject(v, clientID: hashID, mode: "fragment"), hashID, "response_mode fragment")
        XCTAssertThrowsError(try PresentationRequest.verify(try requestObject(v, clientID: "openid_federation:https://rp.example"),
                                                            linkClientID: "openid_federation:https://rp.example", verifierRoots: nil,
                                                            federation: nil)) {
            XCTAssertTrue("\($0)".contains("--trust-anchor"), "\($0)")
        }
    }

    func testLinksCarryClientIDAndRequestURI() throws {
        let link = try PresentationRequest.link("openid4vp://?client_id=x509_hash%3Aabc&request_uri=https%3A%2F%2Frp.example%2Frequest%2F1")
        XCTAssertEqual(link.clientID, "x509_hash:abc")
        XCTAssertEqual(link.requestURI, "https://rp.example/request/1")
        XCTAssertThrowsError(try PresentationRequest.link("openid4vp://?client_id=a&dcql_query=%7B%7D"))
        XCTAssertThrowsError(try PresentationRequest.link("openid4vp://?request_uri=x"))
        XCTAssertThrowsError(try PresentationRequest.link("openid4vp://?client_id=a&client_id=b&request_uri=x"))
    }

    /// direct_post.jwt: one `response` JWE to the verifier's key (its enc choice honoured) holding
    /// vp_token and state; the KB-JWT is bound to client_id and nonce and the SD-JWT verifies.
    func testTheEncryptedAnswerCarriesAKeyBoundPresentationOfOnlyTheRequestedClaims() throws {
        let holder = try HolderKey()
        let file = try wallet(holder: holder)
        let v = try verifier()
        let encryptionKey = try PrivateKey(generatingECCurve: "P-256")
        let clientID = "x509_hash:" + v.hash
        let request = try PresentationRequest.verify(
            try requestObject(v, clientID: clientID, mode: "direct_post.jwt", encryptionKey: encryptionKey), linkClientID: clientID,
            verifierRoots: nil, federation: nil)
        let form = try WalletPresenter(http: try WalletHTTP()).answer(request, wallet: file, now: now)
        XCTAssertEqual(form.map(\.0), ["response"])
        let jwe = try JWE.parse(form[0].1)
        XCTAssertEqual(jwe.encryption, "A256GCM")
        let payload = try JSONValue.parse(try jwe.decrypt(with: encryptionKey))
        XCTAssertEqual(payload["state"], "s-1")
        let text = try XCTUnwrap(payload["vp_token"]?["pid"]?.arrayValue?.first?.stringValue)
        var policy = SDJWTVerificationPolicy(now: now)
        policy.keyBinding = KeyBindingExpectation(audience: clientID, nonce: "n-1")
        let verified = try SDJWT.parse(text).verify(issuerKeys: JWKSet(keys: [JWK(publicKey: issuerKey.publicKey)]), policy: policy)
        XCTAssertEqual(verified.disclosed.map { $0.path.description }, ["given_name"])
        XCTAssertEqual(verified.keyBindingClaims?["aud"], JSONValue.string(clientID))

        var other = policy
        other.keyBinding = KeyBindingExpectation(audience: "x509_hash:other", nonce: "n-1")
        XCTAssertThrowsError(try SDJWT.parse(text).verify(issuerKeys: JWKSet(keys: [JWK(publicKey: issuerKey.publicKey)]), policy: other))
    }

    func testPlainAnswerIsVPTokenAndState() throws {
        let file = try wallet(holder: try HolderKey())
        let v = try verifier()
        let clientID = "x509_san_dns:rp.example"
        let request = try PresentationRequest.verify(try requestObject(v, clientID: clientID), linkClientID: clientID, verifierRoots: nil,
                                                     federation: nil)
        let form = try WalletPresenter(http: try WalletHTTP()).answer(request, wallet: file, now: now)
        XCTAssertEqual(form.map(\.0), ["vp_token", "state"])
        XCTAssertNotNil(try JSONValue.parse(Array(form[0].1.utf8))["pid"]?.arrayValue?.first?.stringValue)
        XCTAssertThrowsError(try request.encryptionKey())
    }
}
