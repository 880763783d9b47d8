import Cryptography
import Foundation
import HTTP
@testable import Issuance
import JSON
import XCTest

/// `token_claims_preview: "nl"`: the token response's `credential_previews` in the NL wallet's
/// `CredentialPreview` shape (see NLCredentialPreview).
final class NLCredentialPreviewTests: XCTestCase {
    private func parse(_ preview: String) throws -> IssuerConfiguration {
        let value = try JSONValue.parse("""
        {"credential_configurations": {"urn:eudi:pid:1": {"format": "dc+sd-jwt", "vct": "urn:eudi:pid:1"}},
         "personas": [{"id": "a", "personal_administrative_number": "1", "given_name": "A", "family_name": "B", "birthdate": "2000-01-01"}],
         "token_claims_preview": \(preview)}
        """)
        return try IssuerConfiguration.parse(JSONReader(value)) { _ in throw IssuanceError.invalidRequest("no files") }
    }

    func testConfigurationAcceptsTrueFalseAndNL() throws {
        XCTAssertEqual(try parse("true").tokenClaimsPreview, .claims)
        XCTAssertEqual(try parse("false").tokenClaimsPreview, .off)
        XCTAssertEqual(try parse(#""nl""#).tokenClaimsPreview, .nl)
        for bad in [#""NL""#, #""yes""#, "1", "null", "[]"] {
            XCTAssertThrowsError(try parse(bad), bad) { error in
                XCTAssertTrue("\(error)".contains("token_claims_preview"), "\(error)")
            }
        }
    }

    private func token(_ provider: PIDProvider, configurations: [String]) throws -> JSONValue {
        let offer = try provider.createOffer(personaID: "erika", credentialConfigurationIDs: configurations,
                                             grant: .preAuthorizedCode, txCode: false)
        let router = IssuanceRoutes(provider: provider).router()
        let response = OAuthFixture.send(router, .post, "/token", headers: [:], form: [
            ("grant_type", PIDProvider.preAuthorizedGrantType), ("pre-authorized_code", offer.preAuthorizedCode!)])
        XCTAssertEqual(response.status, .ok, String(decoding: response.body, as: UTF8.self))
        let body = try OAuthFixture.json(response)
        XCTAssertEqual(body.bytes, response.body, "the previews copied in give the JSON writer's own bytes")
        return body
    }

    func testTokenResponseCarriesNLPreviews() throws {
        let provider = try OAuthFixture.make { $0.tokenClaimsPreview = .nl; $0.batchSize = 4 }
        let body = try token(provider, configurations: [OAuthFixture.sdJWT, OAuthFixture.mdoc])
        XCTAssertNotNil(body["access_token"]?.stringValue)
        let previews = try XCTUnwrap(body["credential_previews"]?.arrayValue)
        XCTAssertEqual(previews.count, 2)
        let code = provider.recoveryCode(for: try XCTUnwrap(provider.configuration.persona(id: "erika")))
        for preview in previews {
            XCTAssertEqual(Set(preview.objectValue?.keys ?? [:].keys),
                           ["config_id", "format", "batch_size", "credential_payload", "issuer_certificate"])
            XCTAssertEqual(preview["batch_size"], 4)
            let payload = try XCTUnwrap(preview["credential_payload"]?.objectValue)
            XCTAssertEqual(payload["iss"], .string(OAuthFixture.issuer))
            XCTAssertEqual(payload["attestation_qualification"], "QEAA")
            XCTAssertNil(payload["claims"], "their attributes sit beside vct and iss, not under claims")
            let der = try XCTUnwrap(preview["issuer_certificate"]?.stringValue.flatMap { Data(base64Encoded: $0) })
            let certificate = try Certificate(der: [UInt8](der))
            switch preview["config_id"]?.stringValue {
            case OAuthFixture.sdJWT:
                XCTAssertEqual(preview["format"], "dc+sd-jwt")
                XCTAssertEqual(payload["vct"], .string(OAuthFixture.sdJWT))
                XCTAssertEqual(payload["given_name"], "Erika")
                XCTAssertEqual(payload["recovery_code"], .string(code))
                XCTAssertEqual(certificate, provider.keys.credentialSigner, "SD-JWT VCs are signed by the credential signer")
            case OAuthFixture.mdoc:
                XCTAssertEqual(preview["format"], "mso_mdoc")
                XCTAssertEqual(payload["vct"], .string(OAuthFixture.mdoc), "vct is the doctype")
                XCTAssertEqual(payload["given_name"], "Erika", "the doctype's nameSpace at the root")
                XCTAssertEqual(payload["eu.europa.ec.eudi.pid.nl.1"]?["recovery_code"], .string(code))
                XCTAssertEqual(certificate, provider.keys.documentSigner, "mdocs are signed by the document signer")
            default:
                XCTFail("unexpected config_id: \(preview)")
            }
        }
    }

    func testOffAndTrueForms() throws {
        let off = try token(try OAuthFixture.make(), configurations: [OAuthFixture.sdJWT])
        XCTAssertNil(off["credential_previews"])
        let own = try token(try OAuthFixture.make { $0.tokenClaimsPreview = true }, configurations: [OAuthFixture.sdJWT])
        let preview = try XCTUnwrap(own["credential_previews"]?.arrayValue?.first)
        XCTAssertEqual(preview["credential_configuration_id"], .string(OAuthFixture.sdJWT))
        XCTAssertNil(preview["config_id"])
    }

    func testMDocAttributesMapping() {
        let mapped = NLCredentialPreview.mdocAttributes([
            "org.example.pid": ["birthdate": "1963-08-12"],
            "org.example.pid.place_of_birth": ["locality": "The Hague"],
            "org.example.pid.place_of_birth.country": ["name": "NL"],
            "other.ns": ["x": 1],
        ], docType: "org.example.pid")
        XCTAssertEqual(mapped["birthdate"], "1963-08-12")
        XCTAssertEqual(mapped["place_of_birth"], ["locality": "The Hague", "country": ["name": "NL"]])
        XCTAssertEqual(mapped["other.ns"], ["x": 1])
    }
}
