import Cryptography
import Issuance
import JSON
import XCTest

/// MOSIP Inji's draft-13 credential request shape (`services.pid_provider.inji_compat`): decoded
/// onto the 1.0 request (the configuration of that format and type, the singular proof as one
/// `proofs.jwt`), read only when switched on and only without a 1.0 target.
final class InjiCredentialRequestTests: XCTestCase {
    typealias T = CredentialTestProvider
    static let nl = CredentialConfiguration(id: "urn:eudi:pid:nl:1", format: .sdJWT, type: "urn:eudi:pid:nl:1", scope: "nl")
    let configurations = [T.sdJWT, T.mdoc, InjiCredentialRequestTests.nl]
    let proof: JSONValue = ["proof_type": "jwt", "jwt": "a.b.c"]

    private func parse(_ body: [String: JSONValue], compat: Bool = true) throws -> CredentialRequest {
        try CredentialRequest.parse(.object(body), injiConfigurations: compat ? configurations : nil)
    }

    private func code(_ body: [String: JSONValue], compat: Bool = true) -> IssuanceError.Code? {
        do { _ = try parse(body, compat: compat); return nil } catch { return (error as? IssuanceError)?.codeValue }
    }

    func testEachShapeMapsOntoItsConfiguration() throws {
        let cases: [([String: JSONValue], String)] = [
            (["format": "vc+sd-jwt", "vct": "urn:eudi:pid:1"], "urn:eudi:pid:1"),
            (["format": "dc+sd-jwt", "vct": "urn:eudi:pid:nl:1"], "urn:eudi:pid:nl:1"),
            (["format": "vc+sd-jwt", "credential_definition": ["vct": "urn:eudi:pid:1"]], "urn:eudi:pid:1"),
            (["format": "vc+sd-jwt", "credential_definition": ["type": ["VerifiableCredential", "urn:eudi:pid:nl:1"]]], "urn:eudi:pid:nl:1"),
            (["format": "mso_mdoc", "doctype": "eu.europa.ec.eudi.pid.1", "claims": ["x": [:]]], "eu.europa.ec.eudi.pid.1"),
        ]
        for (selector, id) in cases {
            var body = selector
            body["proof"] = proof
            let request = try parse(body)
            XCTAssertEqual(request.target, .configuration(id), "\(selector)")
            XCTAssertEqual(request.proofs, .jwt(["a.b.c"]))
        }
    }

    func testOffOrA10RequestReadsAsToday() throws {
        XCTAssertEqual(code(["format": "vc+sd-jwt", "vct": "urn:eudi:pid:1", "proof": proof], compat: false), .invalidCredentialRequest)
        // With compat on, a request naming a 1.0 target is a 1.0 request: `format` is ignored and
        // the singular proof stays unread.
        let request = try parse(["credential_configuration_id": "urn:eudi:pid:1", "format": "mso_mdoc", "proofs": ["jwt": ["x.y.z"]]])
        XCTAssertEqual(request.target, .configuration("urn:eudi:pid:1"))
        XCTAssertEqual(code(["credential_configuration_id": "urn:eudi:pid:1", "proof": proof]), .invalidProof)
    }

    func testRefusals() {
        XCTAssertEqual(code(["format": "ldp_vc", "credential_definition": ["type": ["VerifiableCredential"]], "proof": proof]),
                       .unknownCredentialConfiguration)
        XCTAssertEqual(code(["format": "vc+sd-jwt", "vct": "urn:other", "proof": proof]), .unknownCredentialConfiguration)
        XCTAssertEqual(code(["format": "mso_mdoc", "doctype": "urn:eudi:pid:1", "proof": proof]), .unknownCredentialConfiguration,
                       "a vct is not a doctype")
        XCTAssertEqual(code(["format": "vc+sd-jwt", "proof": proof]), .invalidCredentialRequest)
        XCTAssertEqual(code(["format": "vc+sd-jwt", "doctype": "eu.europa.ec.eudi.pid.1", "proof": proof]), .invalidCredentialRequest)
        XCTAssertEqual(code(["format": "mso_mdoc", "vct": "urn:eudi:pid:1", "proof": proof]), .invalidCredentialRequest)
        XCTAssertEqual(code(["format": "vc+sd-jwt", "vct": "urn:eudi:pid:1", "credential_definition": [:], "proof": proof]),
                       .invalidCredentialRequest)
        XCTAssertEqual(code(["format": .int(1), "vct": "urn:eudi:pid:1", "proof": proof]), .invalidCredentialRequest)
        XCTAssertEqual(code(["format": "vc+sd-jwt", "vct": "urn:eudi:pid:1"]), .invalidProof, "no proof")
        XCTAssertEqual(code(["format": "vc+sd-jwt", "vct": "urn:eudi:pid:1", "proof": ["proof_type": "cwt", "cwt": "x"]]), .invalidProof)
        XCTAssertEqual(code(["format": "vc+sd-jwt", "vct": "urn:eudi:pid:1", "proof": ["proof_type": "jwt"]]), .invalidProof)
        XCTAssertEqual(code(["format": "vc+sd-jwt", "vct": "urn:eudi:pid:1", "proof": proof, "proofs": ["jwt": ["a.b.c"]]]),
                       .invalidCredentialRequest)
    }

    /// Through the endpoint: the proof is checked exactly as for a 1.0 request, then issued.
    func testEndpointIssuesWithTheProofChecked() throws {
        let provider = try T.make(injiCompat: true)
        let key = try PrivateKey(generatingFor: .ES256)
        func body(_ proofJWT: String) -> [UInt8] {
            JSONValue.object(["format": "vc+sd-jwt", "vct": "urn:eudi:pid:1", "proof": ["proof_type": "jwt", "jwt": .string(proofJWT)]]).bytes
        }
        XCTAssertThrowsError(try provider.credentialResponse(
            grant: T.grant(), mediaType: "application/json", body: body(try T.proof(key, nonce: "not-a-c-nonce"))))
        let issued = try provider.credentialResponse(
            grant: T.grant(), mediaType: "application/json", body: body(try T.proof(key, nonce: try provider.issueCNonce())))
        XCTAssertEqual(issued.status, 200)
        let off = try T.make()
        XCTAssertThrowsError(try off.credentialResponse(
            grant: T.grant(), mediaType: "application/json", body: body(try T.proof(key, nonce: try off.issueCNonce())))) {
            XCTAssertEqual(($0 as? IssuanceError)?.codeValue, .invalidCredentialRequest)
        }
    }

    func testConfigurationMember() throws {
        let base = #""credential_configurations": {"urn:eudi:pid:1": {"format": "dc+sd-jwt", "vct": "urn:eudi:pid:1"}}, "personas": [{"id": "a", "personal_administrative_number": "1", "given_name": "A", "family_name": "B", "birthdate": "2000-01-01"}]"#
        func parse(_ extra: String) throws -> IssuerConfiguration {
            try IssuerConfiguration.parse(JSONReader(try JSONValue.parse("{\(base)\(extra)}"))) { _ in .null }
        }
        XCTAssertFalse(try parse("").injiCompat, "off by default")
        XCTAssertTrue(try parse(#", "inji_compat": true"#).injiCompat)
        XCTAssertThrowsError(try parse(#", "inji_compat": "yes""#))
    }
}
