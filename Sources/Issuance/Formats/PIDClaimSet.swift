import CBOR
import JSON
import SDJWT
import Support

/// The claims of one PID issuance in the PID Rulebook's SD-JWT VC naming (ARF Annex 3.01 §4.1):
/// the persona's own claims plus what the issuer adds at issuance time (administrative dates,
/// issuing authority and country, age claims computed from `birthdate`, the recovery code and,
/// for the NL profile, the persona's `bsn` when it has one). Both formats start from this one set, so an SD-JWT VC and an mdoc
/// issued for the same person at the same moment say the same thing.
struct PIDClaimSet {
    /// `age_equal_or_over` members and `age_over_NN` elements. The Rulebook dropped the age
    /// attributes in v1.1 (CIR 2024/2977 has none), but wallets and verifiers built on the EUDI
    /// reference libraries still ask for `age_over_18`, so they stay, optional and disclosable.
    static let ageThresholds = [12, 14, 16, 18, 21, 65]

    /// Claim name → value, without `vct` and the technical claims (`iss`, `iat`, `nbf`, `exp`,
    /// `cnf`, `status`).
    let claims: [String: JSONValue]

    init(persona: Persona, profile: CredentialConfiguration.Profile, issuingAuthority: String, issuingCountry: String,
         recoveryCode: String, issuedAt: Int64, expiresAt: Int64) {
        var claims = persona.claims
        claims["bsn"] = nil
        claims["personal_administrative_number"] = .string(persona.personalAdministrativeNumber)
        // Rulebook §2.4: expiry_date is the administrative validity, which a persona may state;
        // otherwise the technical validity of this credential stands in for it.
        if claims["date_of_issuance"] == nil { claims["date_of_issuance"] = .string(PIDAge.utcDate(issuedAt).description) }
        if claims["date_of_expiry"] == nil { claims["date_of_expiry"] = .string(PIDAge.utcDate(expiresAt).description) }
        claims["issuing_authority"] = .string(issuingAuthority)
        claims["issuing_country"] = .string(issuingCountry)
        if let born = persona.birthDate {
            let age = PIDAge.years(born: born, at: issuedAt)
            claims["age_in_years"] = .int(Int64(age))
            claims["age_birth_year"] = .int(Int64(born.year))
            claims["age_equal_or_over"] = .object(Dictionary(uniqueKeysWithValues: Self.ageThresholds.map { (String($0), .bool(age >= $0)) }))
        }
        claims["recovery_code"] = .string(recoveryCode)
        // The NL profile carries the persona's BSN when it has one; a persona without one (not
        // registered in the BRP) gets an NL PID without the claim, never an invented number.
        if profile == .nl, let bsn = persona.claims["bsn"] {
            claims["bsn"] = bsn
        }
        self.claims = claims
    }

    // MARK: SD-JWT VC

    /// Every claim selectively disclosable (SD-JWT VC §3.2.2.2 keeps only the technical claims
    /// visible); object members of `address`, `place_of_birth` and `age_equal_or_over` and each
    /// element of `nationalities` disclosable on their own (RFC 9901 §6.3 recursive disclosures),
    /// so a holder can show a locality without the street, or one nationality of two.
    var disclosurePlan: DisclosurePlan {
        var rules: [String: DisclosurePlan.Rule] = [:]
        for (name, value) in claims where !DisclosurePlan.alwaysVisibleClaims.contains(name) {
            switch value {
            case .object(let members):
                rules[name] = .disclosable(.disclosing(Array(members.keys)))
            case .array:
                rules[name] = .disclosable(.array(.disclosable))
            default:
                rules[name] = .disclosable
            }
        }
        return .object(rules)
    }

    // MARK: mdoc

    /// How an element's value is made from the SD-JWT VC claim (Rulebook §3.1.1).
    enum Encoding {
        /// JSON as CBOR: strings as tstr, numbers as uint, objects as maps, arrays as arrays.
        case plain
        /// `full-date` = #6.1004(tstr) (RFC 8943), for `birth_date` and the administrative dates.
        case fullDate
        /// `bstr` of the JPEG inside the `picture` data URL.
        case portrait
    }

    struct MDocElement {
        let identifier: String
        let path: [String]
        let encoding: Encoding
        /// In the domestic nameSpace instead of `eu.europa.ec.eudi.pid.1`: ARF Annex 2 PID_06
        /// lets a provider add attributes only in a namespace of its own, never in the EU one.
        var domestic = false
    }

    /// The Rulebook's attribute identifiers (§3.1.1) in its table order, each with the SD-JWT VC
    /// claim (§4.1.1) it carries; `recovery_code` is ours, so it goes in the domestic nameSpace.
    static let mdocElements: [MDocElement] = {
        var list: [MDocElement] = [
            .init(identifier: "family_name", path: ["family_name"], encoding: .plain),
            .init(identifier: "given_name", path: ["given_name"], encoding: .plain),
            .init(identifier: "birth_date", path: ["birthdate"], encoding: .fullDate),
            .init(identifier: "place_of_birth", path: ["place_of_birth"], encoding: .plain),
            .init(identifier: "nationality", path: ["nationalities"], encoding: .plain),
            .init(identifier: "resident_address", path: ["address", "formatted"], encoding: .plain),
            .init(identifier: "resident_country", path: ["address", "country"], encoding: .plain),
            .init(identifier: "resident_state", path: ["address", "region"], encoding: .plain),
            .init(identifier: "resident_city", path: ["address", "locality"], encoding: .plain),
            .init(identifier: "resident_postal_code", path: ["address", "postal_code"], encoding: .plain),
            .init(identifier: "resident_street", path: ["address", "street_address"], encoding: .plain),
            .init(identifier: "resident_house_number", path: ["address", "house_number"], encoding: .plain),
            .init(identifier: "personal_administrative_number", path: ["personal_administrative_number"], encoding: .plain),
            .init(identifier: "portrait", path: ["picture"], encoding: .portrait),
            .init(identifier: "family_name_birth", path: ["birth_family_name"], encoding: .plain),
            .init(identifier: "given_name_birth", path: ["birth_given_name"], encoding: .plain),
            .init(identifier: "sex", path: ["sex"], encoding: .plain),
            .init(identifier: "email_address", path: ["email"], encoding: .plain),
            .init(identifier: "mobile_phone_number", path: ["phone_number"], encoding: .plain),
            .init(identifier: "expiry_date", path: ["date_of_expiry"], encoding: .fullDate),
            .init(identifier: "issuing_authority", path: ["issuing_authority"], encoding: .plain),
            .init(identifier: "issuing_country", path: ["issuing_country"], encoding: .plain),
            .init(identifier: "document_number", path: ["document_number"], encoding: .plain),
            .init(identifier: "issuing_jurisdiction", path: ["issuing_jurisdiction"], encoding: .plain),
            .init(identifier: "issuance_date", path: ["date_of_issuance"], encoding: .fullDate),
        ]
        for age in ageThresholds {
            list.append(.init(identifier: "age_over_\(age)", path: ["age_equal_or_over", String(age)], encoding: .plain))
        }
        list.append(.init(identifier: "age_in_years", path: ["age_in_years"], encoding: .plain))
        list.append(.init(identifier: "age_birth_year", path: ["age_birth_year"], encoding: .plain))
        list.append(.init(identifier: "recovery_code", path: ["recovery_code"], encoding: .plain, domestic: true))
        return list
    }()

    /// The mdoc elements, in table order, for the claims this set has, by nameSpace: `main`
    /// (the docType's, `eu.europa.ec.eudi.pid.1`) and `domestic` (the recovery code). A
    /// nameSpace without elements is left out.
    func mdocNameSpaces(main: String, domestic: String) -> [String: [(identifier: String, value: CBORValue)]] {
        var out: [String: [(identifier: String, value: CBORValue)]] = [:]
        for element in Self.mdocElements {
            guard let source = value(at: element.path), let value = Self.cbor(source, element.encoding) else { continue }
            out[element.domestic ? domestic : main, default: []].append((element.identifier, value))
        }
        return out
    }

    /// The mdoc elements as JSON for `credential_previews`, {nameSpace: {element: value}} as
    /// `mdocNameSpaces` groups them: dates as `YYYY-MM-DD`, the portrait as base64url of its
    /// bytes, everything else as in the SD-JWT VC.
    func mdocPreview(main: String, domestic: String) -> [String: JSONValue] {
        var out: [String: [String: JSONValue]] = [:]
        for element in Self.mdocElements {
            guard let source = value(at: element.path) else { continue }
            let value: JSONValue?
            switch element.encoding {
            case .plain, .fullDate: value = source
            case .portrait: value = Persona.portraitBytes(source).map { .string(Base64URL.encode($0)) }
            }
            if let value { out[element.domestic ? domestic : main, default: [:]][element.identifier] = value }
        }
        return out.mapValues(JSONValue.object)
    }

    private func value(at path: [String]) -> JSONValue? {
        var current: JSONValue? = .object(claims)
        for name in path { current = current?.objectValue?[name] }
        return current
    }

    private static func cbor(_ json: JSONValue, _ encoding: Encoding) -> CBORValue? {
        switch encoding {
        case .fullDate:
            return json.stringValue.flatMap(CBORFullDate.init).map(CBORValue.fullDate)
        case .portrait:
            return Persona.portraitBytes(json).map(CBORValue.bytes)
        case .plain:
            return plainCBOR(json)
        }
    }

    private static func plainCBOR(_ json: JSONValue) -> CBORValue? {
        switch json {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return CBORValue(i)
        case .double(let d): return .float(d)
        case .string(let s): return .text(s)
        case .array(let items):
            var out: [CBORValue] = []
            for item in items {
                guard let v = plainCBOR(item) else { return nil }
                out.append(v)
            }
            return .array(out)
        case .object(let members):
            var entries: [CBORMapEntry] = []
            for (name, member) in members {
                guard let v = plainCBOR(member) else { return nil }
                entries.append(CBORMapEntry(.text(name), v))
            }
            return .map(entries)
        }
    }
}
