import Foundation
import Issuance
import JSON
import XCTest

/// The shipped persona file (Entities/personas/pid.json), read from the repository, parsed as
/// the server parses it.
enum PersonaFile {
    static var url: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Entities/personas/pid.json")
    }

    static func json() throws -> JSONValue { try JSONValue.parse(Array(Data(contentsOf: url))) }

    static func personas() throws -> [Persona] {
        try parse(personas: json()).personas
    }

    /// Parses a minimal `services.pid_provider` whose personas come from `personas`.
    static func parse(personas: JSONValue) throws -> IssuerConfiguration {
        let service: JSONValue = [
            "credential_configurations": ["urn:eudi:pid:1": ["format": "dc+sd-jwt", "vct": "urn:eudi:pid:1"]],
            "personas": "personas/pid.json",
        ]
        return try IssuerConfiguration.parse(JSONReader(service)) { name in
            XCTAssertEqual(name, "personas/pid.json")
            return personas
        }
    }
}

final class PersonaTests: XCTestCase {
    /// Issue 7 item 1: at least 6 personas, adults and a minor, several nationalities (one
    /// dual), non-ASCII names, a full address and a JPEG portrait each, Dutch ones with a
    /// valid BSN, one deferred.
    func testShippedPersonaFileParsesAndCoversTheCases() throws {
        let personas = try PersonaFile.personas()
        XCTAssertGreaterThanOrEqual(personas.count, 6)
        XCTAssertEqual(personas.first?.deferred, false, "the interop tests take the first persona for immediate issuance")
        XCTAssertEqual(personas.filter(\.deferred).count, 1)
        XCTAssertEqual(Set(personas.map(\.personalAdministrativeNumber)).count, personas.count)

        let year = Calendar(identifier: .gregorian).component(.year, from: Date())
        let birthYears = personas.compactMap { $0.claims["birthdate"]?.stringValue.flatMap { Int($0.prefix(4)) } }
        XCTAssertTrue(birthYears.contains { year - $0 < 17 }, "a minor")
        XCTAssertTrue(birthYears.contains { year - $0 > 60 }, "an older adult")

        let nationalities = personas.map { $0.claims["nationalities"]?.stringArray ?? [] }
        XCTAssertGreaterThanOrEqual(Set(nationalities.joined()).count, 6)
        XCTAssertTrue(nationalities.contains { $0.count > 1 }, "dual nationality")
        XCTAssertTrue(personas.contains { !$0.displayName.allSatisfy(\.isASCII) })

        for persona in personas {
            let address = try XCTUnwrap(persona.claims["address"]?.objectValue, persona.id)
            XCTAssertEqual(Set(address.keys), ["formatted", "country", "region", "locality", "postal_code", "street_address",
                                               "house_number"], persona.id)
            let picture = try XCTUnwrap(persona.claims["picture"]?.stringValue, persona.id)
            let jpeg = try XCTUnwrap(Data(base64Encoded: String(picture.dropFirst("data:image/jpeg;base64,".count))), persona.id)
            XCTAssertEqual(Array(jpeg.prefix(3)), [0xFF, 0xD8, 0xFF], persona.id)
            XCTAssertLessThan(jpeg.count, 8_000, "small: it travels in every credential")
            XCTAssertNotNil(persona.claims["place_of_birth"]?.objectValue, persona.id)
            if nationalitiesContainNL(persona) {
                let bsn = try XCTUnwrap(persona.claims["bsn"]?.stringValue, "\(persona.id) is Dutch")
                XCTAssertTrue(elfproef(bsn), "\(persona.id): \(bsn)")
            }
        }
    }

    /// Bad persona members stop the configuration with the member's path.
    func testInvalidPersonaClaimsAreRefusedWithTheirPath() throws {
        let base: [String: JSONValue] = ["id": "p", "personal_administrative_number": "1", "given_name": "A", "family_name": "B",
                                         "birthdate": "2000-01-01"]
        XCTAssertNoThrow(try PersonaFile.parse(personas: [.object(base)]))
        let cases: [(String, JSONValue, String)] = [
            ("birth_date", "2000-01-01", "personas[0].birth_date"),
            ("birthdate", "2000-02-30", "personas[0].birthdate"),
            ("nationalities", ["nl"], "personas[0].nationalities[0]"),
            ("nationalities", [], "personas[0].nationalities"),
            ("address", ["street": "x"], "personas[0].address.street"),
            ("place_of_birth", ["country": "Netherlands"], "personas[0].place_of_birth.country"),
            ("bsn", "123456789", "personas[0].bsn"),
            ("sex", 7, "personas[0].sex"),
            ("picture", "data:image/png;base64,iVBORw0KGgo=", "personas[0].picture"),
            ("recovery_code", "abc", "personas[0].recovery_code"),
        ]
        for (name, value, path) in cases {
            var persona = base
            persona[name] = value
            XCTAssertThrowsError(try PersonaFile.parse(personas: [.object(persona)]), name) { error in
                XCTAssertTrue("\(error)".contains(path), "\(name): \(error)")
            }
        }
    }

    private func nationalitiesContainNL(_ persona: Persona) -> Bool {
        persona.claims["nationalities"]?.stringArray?.contains("NL") ?? false
    }

    /// The Dutch 11-test, written out independently of the server's.
    private func elfproef(_ bsn: String) -> Bool {
        let d = bsn.compactMap(\.wholeNumberValue)
        guard d.count == 9 else { return false }
        return (9 * d[0] + 8 * d[1] + 7 * d[2] + 6 * d[3] + 5 * d[4] + 4 * d[5] + 3 * d[6] + 2 * d[7] - d[8]) % 11 == 0
    }
}
