import CBOR
import Cryptography
import Foundation
import JSON
import Support

/// What a persona file may say about a person, checked when the file is read so a typo
/// (`birth_date` for `birthdate`, a lowercase country code, a BSN that fails the 11-test) stops
/// the server at start with the member's path instead of producing a PID a wallet rejects.
/// Names and value shapes are the PID Rulebook's SD-JWT VC encoding (ARF Annex 3.01 §4.1);
/// `bsn` is the NL profile's addition. Issuer-side claims (`issuing_*`, ages, `recovery_code`)
/// are computed at issuance and may not be given.
extension Persona {
    enum ClaimShape {
        case text, date, countries, placeOfBirth, address, picture, sex, bsn
    }

    static let claimShapes: [String: ClaimShape] = [
        "given_name": .text, "family_name": .text, "birthdate": .date, "place_of_birth": .placeOfBirth,
        "nationalities": .countries, "address": .address, "personal_administrative_number": .text, "picture": .picture,
        "birth_family_name": .text, "birth_given_name": .text, "sex": .sex, "email": .text, "phone_number": .text,
        "date_of_expiry": .date, "date_of_issuance": .date, "document_number": .text, "issuing_jurisdiction": .text,
        "bsn": .bsn,
    ]

    static let placeOfBirthMembers: Set<String> = ["country", "region", "locality"]
    static let addressMembers: Set<String> = [
        "formatted", "country", "region", "locality", "postal_code", "street_address", "house_number",
    ]
    /// PID Rulebook §2.3: ISO/IEC 5218 values plus 3–6.
    static let sexValues: Set<Int64> = [0, 1, 2, 3, 4, 5, 6, 9]
    static let picturePrefix = "data:image/jpeg;base64,"

    /// Checks every claim member of a persona object (everything but `id` and `deferred`).
    static func checkClaims(_ claims: [String: JSONValue], path: JSONPath) throws(JSONReadError) {
        for (name, value) in claims.sorted(by: { $0.key < $1.key }) {
            let field = JSONField(value, path: path.appending(name))
            guard let shape = claimShapes[name] else {
                throw field.invalid("unknown persona claim; expected one of \(claimShapes.keys.sorted().joined(separator: ", "))")
            }
            try check(field, shape)
        }
    }

    private static func check(_ field: JSONField, _ shape: ClaimShape) throws(JSONReadError) {
        switch shape {
        case .text:
            try text(field)
        case .date:
            guard let s = field.value.stringValue, CBORFullDate(s) != nil else { throw field.invalid("expected a date YYYY-MM-DD") }
        case .countries:
            let items = try field.array(nonEmpty: true)
            for item in items { try country(item) }
        case .placeOfBirth, .address:
            let reader = try field.object()
            try reader.rejectUnknown(allowed: shape == .address ? addressMembers : placeOfBirthMembers)
            guard !reader.isEmpty else { throw field.invalid("expected at least one member") }
            for (name, member) in reader.members {
                if name == "country" { try country(member) } else { try text(member) }
            }
        case .picture:
            guard portraitBytes(field.value) != nil else {
                throw field.invalid("expected a data URL \"\(picturePrefix)...\" holding a JPEG")
            }
        case .sex:
            guard let v = field.value.intValue, sexValues.contains(v) else { throw field.invalid("expected 0–6 or 9 (PID Rulebook §2.3)") }
        case .bsn:
            guard let s = field.value.stringValue, isValidBSN(s) else { throw field.invalid("expected 9 digits passing the 11-test") }
        }
    }

    /// Rulebook §3.1.1: every `tstr` is at most 150 characters.
    private static func text(_ field: JSONField) throws(JSONReadError) {
        let s = try field.nonEmptyString()
        guard s.count <= 150 else { throw field.invalid("at most 150 characters") }
    }

    private static func country(_ field: JSONField) throws(JSONReadError) {
        guard let s = field.value.stringValue, s.utf8.count == 2, s.utf8.allSatisfy({ $0 >= 0x41 && $0 <= 0x5A }) else {
            throw field.invalid("expected an ISO 3166-1 alpha-2 code")
        }
    }

    /// The JPEG inside a `picture` data URL (Rulebook §4.1.1: "data URL containing the
    /// base64-encoded portrait in JPEG format"); nil when it is not one.
    static func portraitBytes(_ value: JSONValue) -> [UInt8]? {
        guard let s = value.stringValue, s.hasPrefix(picturePrefix),
              let data = Data(base64Encoded: String(s.dropFirst(picturePrefix.count))) else { return nil }
        let bytes = [UInt8](data)
        // JPEG SOI marker: catches a PNG pasted under a JPEG label.
        return bytes.count > 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 ? bytes : nil
    }

    /// The Dutch "elfproef" for a BSN: 9 digits d1..d9 with 9·d1 + 8·d2 + … + 2·d8 − d9 ≡ 0 (mod 11).
    static func isValidBSN(_ s: String) -> Bool {
        let digits = s.utf8.map { Int($0) - 0x30 }
        guard digits.count == 9, digits.allSatisfy({ (0...9).contains($0) }) else { return false }
        let sum = (0..<8).reduce(0) { $0 + (9 - $1) * digits[$1] } - digits[8]
        return sum % 11 == 0 && sum != 0
    }

    /// The persona's birth date (checked at parse; nil only for a persona built in code with a bad one).
    var birthDate: CBORFullDate? { claims["birthdate"]?.stringValue.flatMap(CBORFullDate.init) }
}

/// Age at a moment, from a birth date: whole years completed on the UTC calendar date of `at`.
/// Someone born on 29 February turns a year older on 1 March in common years.
enum PIDAge {
    static func years(born: CBORFullDate, at unixSeconds: Int64) -> Int {
        let today = utcDate(unixSeconds)
        let hadBirthday = (today.month, today.day) >= (born.month, born.day)
        return today.year - born.year - (hadBirthday ? 0 : 1)
    }

    /// The UTC calendar date of a Unix time (the CBOR tdate text is already RFC 3339 UTC).
    static func utcDate(_ unixSeconds: Int64) -> CBORFullDate {
        guard case .tagged(_, .text(let text)) = CBORValue.dateTime(unixSeconds), let date = CBORFullDate(String(text.prefix(10))) else {
            preconditionFailure("tdate text always starts with YYYY-MM-DD")
        }
        return date
    }
}

extension PIDProvider {
    /// lowercase hex of HMAC-SHA256(keys.recoverySecret, persona.personalAdministrativeNumber)
    ///
    /// The NL wallet model (issue 7 item 9): a wallet compares this code in a fresh PID with the
    /// one it holds to recognise the same person (PIN recovery, PID renewal) without learning
    /// the number itself. Keyed by the issuer's secret in `Keys/`, so it is stable across
    /// issuances, formats and restarts, and cannot be computed by anyone who knows the number.
    public func recoveryCode(for persona: Persona) -> String {
        Hex.encode(HMAC.sha256(key: keys.recoverySecret, data: Array(persona.personalAdministrativeNumber.utf8)))
    }
}
