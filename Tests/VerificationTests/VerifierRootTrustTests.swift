import CBOR
import COSE
import Cryptography
import JOSE
import JSON
import MDoc
import SDJWT
import Store
import Support
@testable import Verification
import XCTest

/// Issuers outside the federation, trusted through the configured `issuer_roots`: an SD-JWT VC
/// whose `x5c` chains to a root and names its `iss`, and an mdoc DeviceResponse whose document
/// signer chains to an IACA root, verified over OpenID4VP's SessionTranscript.
final class VerifierRootTrustTests: XCTestCase {
    private func refused(_ f: VerifierFixture, _ request: PresentationRequestRecord, _ token: String) -> (String, String)? {
        _ = try? f.verifier.receiveResponse(form: VerifierFixture.form(state: request.state, vpToken: ["pid": [.string(token)]]))
        guard let record = try? f.verifier.request(id: request.id),
              let failed = f.verifier.requestResult(record)["checks"]?.arrayValue?.first(where: { $0["ok"] == .bool(false) }) else { return nil }
        return (failed["name"]?.stringValue ?? "", failed["detail"]?.stringValue ?? "")
    }

    func testSDJWTWithX5cToAConfiguredRoot() throws {
        let now: Int64 = 1_800_000_000
        let rootKey = try PrivateKey(generatingFor: .ES256)
        let root = try CertificateBuilder(
            subject: DistinguishedName(organization: "Test", commonName: "Test Issuer Root"), subjectKey: rootKey.publicKey,
            notBefore: now - 3_600, notAfter: now + 86_400 * 30,
            extensions: [.basicConstraints(isCA: true, pathLength: 0), .keyUsage([.keyCertSign]), .subjectKeyIdentifier, .authorityKeyIdentifier]
        ).selfSign(with: rootKey)
        let f = try VerifierFixture.make(refuseIssuer: true, issuerRoots: [root])
        func leaf(naming name: String) throws -> Certificate {
            try CertificateBuilder(
                subject: DistinguishedName(organization: "Test", commonName: "Test Issuer"), subjectKey: f.issuer.key.publicKey,
                notBefore: now - 3_600, notAfter: now + 86_400,
                extensions: [.basicConstraints(isCA: false, pathLength: nil), .keyUsage([.digitalSignature]), .subjectKeyIdentifier,
                             .authorityKeyIdentifier, .subjectAlternativeName([.uri(name)])]
            ).sign(issuer: root, key: rootKey)
        }
        let holder = try PrivateKey(generatingFor: .ES256)
        func credential(x5c: [Certificate]) throws -> SDJWT {
            let claims: [String: JSONValue] = ["iss": .string(TestIssuer.id), "iat": .int(now), "vct": "urn:eudi:pid:1",
                                               "cnf": ["jwk": JWK(publicKey: holder.publicKey).jsonValue], "given_name": "Erika"]
            return try SDJWTIssuer(key: f.issuer.key, algorithm: .ES256, x5c: Certificate.x5c(x5c))
                .issue(claims: claims, plan: .object(["given_name": .disclosable]))
        }
        let request = try f.verifier.createRequest(PresentationRequestOptions(query: DCQLQuery.parse(
            ["credentials": [["id": "pid", "format": "dc+sd-jwt", "meta": ["vct_values": ["urn:eudi:pid:1"]], "claims": [["path": ["given_name"]]]]]]), responseMode: .directPost))
        let good = try f.present(try credential(x5c: [try leaf(naming: TestIssuer.id)]), holder: holder, names: ["given_name"],
                                 audience: request.clientID, nonce: request.nonce)
        _ = try f.verifier.receiveResponse(form: VerifierFixture.form(state: request.state, vpToken: ["pid": [.string(good)]]))
        let result = f.verifier.requestResult(try XCTUnwrap(f.verifier.request(id: request.id)))
        XCTAssertEqual(result["state"], "verified", "\(result)")
        XCTAssertTrue(result["checks"]?.arrayValue?.contains { $0["name"] == "pid.issuer_trust" && ($0["detail"]?.stringValue ?? "").contains("x5c chains") } ?? false)

        // A certificate that names another issuer proves nothing about this `iss`.
        let other = try f.verifier.createRequest(PresentationRequestOptions(query: DCQLQuery.parse(DCQLTemplate.fullPID.query), responseMode: .directPost))
        let wrong = try f.present(try credential(x5c: [try leaf(naming: "https://someone.else")]), holder: holder, names: ["given_name"],
                                  audience: other.clientID, nonce: other.nonce)
        let failed = refused(f, other, wrong)
        XCTAssertEqual(failed?.0, "pid.issuer_trust")
        XCTAssertTrue(failed?.1.contains("does not name") ?? false, "\(failed!)")
    }

    func testMDocWithDocumentSignerUnderAConfiguredIACA() throws {
        let now: Int64 = 1_800_000_000
        let iacaKey = try PrivateKey(generatingFor: .ES256)
        let iaca = try AnnexB.makeIACA(key: iacaKey, country: "DE", organization: "Trustbed", commonName: "Test IACA",
                                       issuerAltName: .uri("https://pid.example"), crlURL: "https://pid.example/iaca.crl",
                                       validity: .init(notBefore: now - 86_400, notAfter: now + 365 * 86_400))
        let signerKey = try PrivateKey(generatingFor: .ES256)
        let ds = try AnnexB.makeDocumentSigner(
            subjectKey: signerKey.publicKey, iaca: iaca, iacaKey: iacaKey, organization: "Trustbed", commonName: "Test DS",
            issuerAltName: .uri("https://pid.example"), crlURL: "https://pid.example/iaca.crl",
            validity: .init(notBefore: now - 86_400, notAfter: now + 300 * 86_400))
        let deviceKey = try PrivateKey(generatingFor: .ES256)
        let issuerSigned = try IssuerSigned.issue(
            docType: EUDIPID.docType,
            nameSpaces: [EUDIPID.nameSpace: [("family_name", "Mustermann"), ("given_name", "Erika"), ("age_over_18", true)]],
            deviceKey: COSEKey(publicKey: deviceKey.publicKey),
            validity: ValidityInfo(signed: now - 60, validFrom: now - 60, validUntil: now + 90 * 86_400),
            signer: try DocumentSigner(key: signerKey, certificateChain: [ds]))
        let f = try VerifierFixture.make(refuseIssuer: true, issuerRoots: [iaca])
        let query: JSONValue = ["credentials": [["id": "pid", "format": "mso_mdoc", "meta": ["doctype_value": .string(EUDIPID.docType)],
                                                 "claims": [["path": [.string(EUDIPID.nameSpace), "family_name"]]]]]]
        for mode in ResponseMode.allCases {
            let request = try f.verifier.createRequest(PresentationRequestOptions(query: DCQLQuery.parse(query), responseMode: mode))
            let encrypted = mode == .directPostJWT
            let transcript = SessionTranscript.openID4VP(
                clientID: request.clientID, nonce: request.nonce,
                jwkThumbprint: encrypted ? Base64URL.decode(f.verifier.keys.encryptionJWK.thumbprint()) : nil,
                responseURI: f.verifier.urls.response)
            let token = try DeviceResponse.present(issuerSigned, elements: [EUDIPID.nameSpace: ["family_name"]], deviceKey: deviceKey,
                                                   sessionTranscript: transcript).base64URL
            let parameters: JSONValue = ["vp_token": ["pid": [.string(token)]], "state": .string(request.state)]
            let form: [(name: String, value: String)] = encrypted
                ? [("response", try JWE.encrypt(parameters.bytes, to: f.verifier.keys.encryptionJWK, encryption: .A128GCM))]
                : VerifierFixture.form(state: request.state, vpToken: ["pid": [.string(token)]])
            _ = try f.verifier.receiveResponse(form: form)
            let result = f.verifier.requestResult(try XCTUnwrap(f.verifier.request(id: request.id)))
            XCTAssertEqual(result["state"], "verified", "\(mode): \(result)")
            XCTAssertEqual(result["claims"]?["pid"]?[EUDIPID.nameSpace]?["family_name"], "Mustermann")
        }
        // The device signed another request's transcript: refused at device_signature.
        let request = try f.verifier.createRequest(PresentationRequestOptions(query: DCQLQuery.parse(query), responseMode: .directPost))
        let stale = SessionTranscript.openID4VP(clientID: request.clientID, nonce: "other", jwkThumbprint: nil, responseURI: f.verifier.urls.response)
        let token = try DeviceResponse.present(issuerSigned, elements: [EUDIPID.nameSpace: ["family_name"]], deviceKey: deviceKey,
                                               sessionTranscript: stale).base64URL
        XCTAssertEqual(refused(f, request, token)?.0, "pid.device_signature")
        // More than asked: refused at claims.
        let extra = try f.verifier.createRequest(PresentationRequestOptions(query: DCQLQuery.parse(query), responseMode: .directPost))
        let full = SessionTranscript.openID4VP(clientID: extra.clientID, nonce: extra.nonce, jwkThumbprint: nil, responseURI: f.verifier.urls.response)
        let more = try DeviceResponse.present(issuerSigned, elements: [EUDIPID.nameSpace: ["family_name", "given_name"]], deviceKey: deviceKey,
                                              sessionTranscript: full).base64URL
        let failed = refused(f, extra, more)
        XCTAssertEqual(failed?.0, "pid.claims")
        XCTAssertTrue(failed?.1.contains("given_name") ?? false)
    }
}
