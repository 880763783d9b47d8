import JSON

/// The PID's claims as `credential_metadata.claims` describes them (OpenID4VCI 1.0 Appendix
/// B.2), built from the same element table the formats issue from (`PIDClaimSet`), so the
/// metadata cannot list a claim the credentials lack or miss one they carry. Adds an English
/// display name and marks the Rulebook's mandatory attributes (and the recovery code, which
/// every credential of ours carries).
enum PIDClaimDisplay {
    private static let names: [String: String] = [
        "family_name": "Family name", "given_name": "Given name", "birth_date": "Date of birth",
        "place_of_birth": "Place of birth", "nationality": "Nationality", "resident_address": "Address",
        "resident_country": "Country of residence", "resident_state": "State or region", "resident_city": "City",
        "resident_postal_code": "Postal code", "resident_street": "Street", "resident_house_number": "House number",
        "personal_administrative_number": "Personal administrative number", "portrait": "Portrait",
        "family_name_birth": "Family name at birth", "given_name_birth": "Given name at birth", "sex": "Sex",
        "email_address": "Email address", "mobile_phone_number": "Mobile phone number", "expiry_date": "Date of expiry",
        "issuing_authority": "Issuing authority", "issuing_country": "Issuing country", "document_number": "Document number",
        "issuing_jurisdiction": "Issuing jurisdiction", "issuance_date": "Date of issuance", "age_in_years": "Age in years",
        "age_birth_year": "Year of birth", "recovery_code": "Recovery code",
    ]
    private static let mandatory: Set<String> = [
        "family_name", "given_name", "birth_date", "place_of_birth", "nationality", "expiry_date", "issuing_authority",
        "issuing_country", "recovery_code",
    ]

    /// `credential_metadata.claims` for a configuration: SD-JWT VC claim paths, or
    /// `[nameSpace, element]` for mdoc (the recovery code under `domesticNameSpace`); the NL
    /// profile adds `bsn` (SD-JWT VC only), not mandatory: personas without one get none.
    static func claims(for configuration: CredentialConfiguration, domesticNameSpace: String) -> JSONValue {
        var out: [JSONValue] = PIDClaimSet.mdocElements.map { element in
            let path: [String]
            switch configuration.format {
            case .sdJWT: path = element.path
            case .mdoc: path = [element.domestic ? domesticNameSpace : configuration.type, element.identifier]
            }
            let name = names[element.identifier]
                ?? (element.identifier.hasPrefix("age_over_") ? "Aged \(element.identifier.dropFirst(9)) or over" : element.identifier)
            return entry(path, name, mandatory.contains(element.identifier))
        }
        if configuration.profile == .nl { out.append(entry(["bsn"], "BSN (citizen service number)", false)) }
        return .array(out)
    }

    private static func entry(_ path: [String], _ name: String, _ mandatory: Bool) -> JSONValue {
        ["path": .array(path.map(JSONValue.string)), "mandatory": .bool(mandatory), "display": [["name": .string(name), "locale": "en"]]]
    }
}
