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
}
