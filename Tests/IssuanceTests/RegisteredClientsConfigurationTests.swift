import Issuance
import JSON
import OAuth
import XCTest

/// `clients` in the PID Provider's configuration: each entry parsed by `RegisteredClient`.
final class RegisteredClientsConfigurationTests: XCTestCase {
    func testClientsConfiguration() throws {
        func parse(_ clients: JSONValue) throws -> IssuerConfiguration {
            let object: JSONValue = [
                "credential_configurations": ["urn:eudi:pid:1": ["format": "dc+sd-jwt", "vct": "urn:eudi:pid:1"]],
                "personas": [["id": "erika", "personal_administrative_number": "1", "given_name": "Erika", "family_name": "Mustermann",
                              "birthdate": "1984-01-26"]],
                "clients": clients,
            ]
            return try IssuerConfiguration.parse(try JSONReader(object), loadPersonas: { _ in [] })
        }
        let c = try parse(["wallet-dev": ["redirect_uris": ["eu.europa.ec.euidi://authorization", "http://127.0.0.1/cb"]]])
        XCTAssertEqual(c.clients["wallet-dev"]?.redirectURIs, ["eu.europa.ec.euidi://authorization", "http://127.0.0.1/cb"])
        let bad: [JSONValue] = [
            ["x": ["redirect_uris": []]],
            ["x": ["redirect_uris": ["https://w.example/cb#f"]]],
            ["x": ["redirect_uris": ["http://wallet.example/cb"]]],
            ["x": ["redirect_uris": ["http://evil.example\\@127.0.0.1/"]]],
            ["x": ["redirect_uris": ["javascript:x"]]],
            ["x": ["redirect_uri": ["https://w.example/cb"]]],
            ["x": "https://w.example/cb"],
        ]
        for clients in bad {
            XCTAssertThrowsError(try parse(clients), "\(clients)") { error in
                XCTAssertTrue("\(error)".contains("clients"), "the error names the field: \(error)")
            }
        }
    }
}
