import JSON

/// A test person the PID Provider can issue a PID for. `claims` uses the PID Rulebook's
/// SD-JWT VC claim names (`given_name`, `birthdate`, `address.street_address`, ...); the
/// formats map them to mdoc element identifiers. `deferred` makes every issuance for this
/// person deferred (OpenID4VCI §9).
public struct Persona: Sendable, Equatable {
    public let id: String
    public let personalAdministrativeNumber: String
    public let deferred: Bool
    public let claims: [String: JSONValue]

    public init(id: String, personalAdministrativeNumber: String, deferred: Bool = false, claims: [String: JSONValue]) {
        self.id = id
        self.personalAdministrativeNumber = personalAdministrativeNumber
        self.deferred = deferred
        self.claims = claims
    }

    /// "Given Family", for pages and logs that name the persona (never the claims themselves).
    public var displayName: String {
        [claims["given_name"]?.stringValue, claims["family_name"]?.stringValue].compactMap { $0 }.joined(separator: " ")
    }

    /// A persona object: `id`, `personal_administrative_number`, optional `deferred`, and the
    /// claims (every other member).
    static func parse(_ reader: JSONReader) throws(JSONReadError) -> Persona {
        let id = try reader.nonEmptyString("id")
        guard id.utf8.allSatisfy({ $0 < 0x80 && ($0 == 0x2D || $0 == 0x5F || $0 == 0x2E || ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A)) }) else {
            throw reader.invalid("id", "expected letters, digits, '-', '_' or '.'")
        }
        let number = try reader.nonEmptyString("personal_administrative_number")
        let deferred = try reader.optionalBool("deferred") ?? false
        var claims = reader.object
        claims["id"] = nil
        claims["deferred"] = nil
        for required in ["given_name", "family_name", "birthdate"] where claims[required]?.stringValue == nil {
            throw reader.invalid(required, "every persona needs \(required) (a string)")
        }
        try checkClaims(claims, path: reader.path)
        return Persona(id: id, personalAdministrativeNumber: number, deferred: deferred, claims: claims)
    }

    /// A non-empty array of persona objects with distinct ids.
    static func parseList(_ field: JSONField) throws(JSONReadError) -> [Persona] {
        guard let items = field.value.arrayValue, !items.isEmpty else { throw field.invalid("expected a non-empty array of personas") }
        var personas: [Persona] = []
        var seen = Set<String>()
        for (i, item) in items.enumerated() {
            let reader = try JSONReader(item, path: field.path.appending(index: i))
            let persona = try parse(reader)
            guard seen.insert(persona.id).inserted else { throw reader.invalid("id", "duplicate persona id \(persona.id)") }
            personas.append(persona)
        }
        return personas
    }
}
