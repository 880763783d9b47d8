import JSON

/// The PID's claims as `credential_metadata.claims` describes them (OpenID4VCI 1.0 Appendix
/// B.2): a path per format and an English display name. The SD-JWT VC names and the mdoc
/// element identifiers follow the PID Rulebook; `mandatory` marks the Rulebook's mandatory
/// attributes (and the recovery code, which every credential of ours carries).
struct PIDClaimDisplay {
    let sdJWTPath: [JSONValue]
    /// nil where the mdoc has no element for the claim (`address.formatted`).
    let mdocElement: String?
    let name: String
    let mandatory: Bool

    static let all: [PIDClaimDisplay] = [
        .init(["family_name"], "family_name", "Family name", true),
        .init(["given_name"], "given_name", "Given name", true),
        .init(["birthdate"], "birth_date", "Date of birth", true),
        .init(["place_of_birth"], "place_of_birth", "Place of birth", true),
        .init(["nationalities"], "nationality", "Nationality", true),
        .init(["address", "formatted"], nil, "Address", false),
        .init(["address", "street_address"], "resident_street", "Street", false),
        .init(["address", "house_number"], "resident_house_number", "House number", false),
        .init(["address", "postal_code"], "resident_postal_code", "Postal code", false),
        .init(["address", "locality"], "resident_city", "City", false),
        .init(["address", "region"], "resident_state", "State or region", false),
        .init(["address", "country"], "resident_country", "Country of residence", false),
        .init(["personal_administrative_number"], "personal_administrative_number", "Personal administrative number", false),
        .init(["picture"], "portrait", "Portrait", false),
        .init(["birth_family_name"], "family_name_birth", "Family name at birth", false),
        .init(["birth_given_name"], "given_name_birth", "Given name at birth", false),
        .init(["sex"], "sex", "Sex", false),
        .init(["email"], "email_address", "Email address", false),
        .init(["phone_number"], "mobile_phone_number", "Mobile phone number", false),
        .init(["age_equal_or_over", "18"], "age_over_18", "Aged 18 or over", false),
        .init(["age_in_years"], "age_in_years", "Age in years", false),
        .init(["age_birth_year"], "age_birth_year", "Year of birth", false),
        .init(["date_of_issuance"], "issuance_date", "Date of issuance", false),
        .init(["date_of_expiry"], "expiry_date", "Date of expiry", true),
        .init(["issuing_authority"], "issuing_authority", "Issuing authority", true),
        .init(["issuing_country"], "issuing_country", "Issuing country", true),
        .init(["recovery_code"], "recovery_code", "Recovery code", true),
    ]

    /// The NL profile's addition (SD-JWT VC only).
    static let bsn = PIDClaimDisplay(["bsn"], nil, "BSN (citizen service number)", true)

    private init(_ path: [String], _ mdocElement: String?, _ name: String, _ mandatory: Bool) {
        self.sdJWTPath = path.map(JSONValue.string)
        self.mdocElement = mdocElement
        self.name = name
        self.mandatory = mandatory
    }

    /// `credential_metadata.claims` for a configuration.
    static func claims(for configuration: CredentialConfiguration) -> JSONValue {
        var list = all
        if configuration.profile == .nl { list.append(bsn) }
        return .array(list.compactMap { claim -> JSONValue? in
            let path: [JSONValue]
            switch configuration.format {
            case .sdJWT: path = claim.sdJWTPath
            case .mdoc:
                guard let element = claim.mdocElement else { return nil }
                path = [.string(configuration.type), .string(element)]
            }
            return ["path": .array(path), "mandatory": .bool(claim.mandatory),
                    "display": [["name": .string(claim.name), "locale": "en"]]]
        })
    }
}
