import Issuance
import JSON
import XCTest

final class IssuerConfigurationTests: XCTestCase {
    private func parse(_ text: String) throws -> IssuerConfiguration {
        let value = try JSONValue.parse(text)
        return try IssuerConfiguration.parse(JSONReader(value)) { _ in throw IssuanceError.invalidRequest("no files") }
    }

    func testDefaultsAndPaths() throws {
        let c = try parse("""
        {"credential_configurations": {"urn:eudi:pid:1": {"format": "dc+sd-jwt", "vct": "urn:eudi:pid:1"}},
         "personas": [{"id": "a", "personal_administrative_number": "1", "given_name": "A", "family_name": "B", "birthdate": "2000-01-01"}]}
        """)
        XCTAssertEqual(c.configuration(id: "urn:eudi:pid:1")?.scope, "urn:eudi:pid:1")
        XCTAssertEqual(c.batchSize, 10)
        XCTAssertEqual(c.persona(id: "a")?.personalAdministrativeNumber, "1")
        XCTAssertThrowsError(try parse("""
        {"credential_configurations": {"x": {"format": "jwt_vc"}}, "personas": []}
        """)) { error in
            XCTAssertEqual("\(error)".contains("credential_configurations.x.format"), true, "\(error)")
        }
    }

    /// ARF Annex 2 PID_06: the mdoc's domestic nameSpace defaults from the issuing country and
    /// may be set per mso_mdoc configuration (`domestic_namespace`), never on an SD-JWT VC one.
    func testDomesticNameSpace() throws {
        let personas = #"[{"id": "a", "personal_administrative_number": "1", "given_name": "A", "family_name": "B", "birthdate": "2000-01-01"}]"#
        let c = try parse("""
        {"credential_configurations": {
            "m": {"format": "mso_mdoc", "doctype": "eu.europa.ec.eudi.pid.1"},
            "d": {"format": "mso_mdoc", "doctype": "eu.europa.ec.eudi.pid.1", "domestic_namespace": "org.example.pid.1"}},
         "issuing_country": "BE", "personas": \(personas)}
        """)
        XCTAssertEqual(c.domesticNameSpace(for: try XCTUnwrap(c.configuration(id: "m"))), "eu.europa.ec.eudi.pid.be.1")
        XCTAssertEqual(c.domesticNameSpace(for: try XCTUnwrap(c.configuration(id: "d"))), "org.example.pid.1")
        for bad in [#"{"format": "dc+sd-jwt", "vct": "v", "domestic_namespace": "x.1"}"#,
                    #"{"format": "mso_mdoc", "doctype": "eu.europa.ec.eudi.pid.1", "domestic_namespace": "eu.europa.ec.eudi.pid.1"}"#,
                    #"{"format": "mso_mdoc", "doctype": "d", "domestic_namespace": ""}"#,
                    #"{"format": "mso_mdoc", "doctype": "d", "domestic_namespace": 7}"#] {
            XCTAssertThrowsError(try parse(#"{"credential_configurations": {"x": \#(bad)}, "personas": \#(personas)}"#)) { error in
                XCTAssertTrue("\(error)".contains("credential_configurations.x.domestic_namespace"), "\(error)")
            }
        }
    }
}
