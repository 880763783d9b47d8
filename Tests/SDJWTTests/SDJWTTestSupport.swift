import Cryptography
import JOSE
import JSON
import SDJWT

/// A PID-shaped credential and plan shared by the tests: flat claims, a recursively disclosable
/// `address`, and `nationalities` disclosed element by element.
enum Fixture {
    static let now: Int64 = 1_700_000_000

    static func claims(holder: JWK) -> [String: JSONValue] {
        [
            "iss": "https://issuer.example/pid-provider",
            "vct": "urn:eudi:pid:1",
            "iat": .int(now),
            "exp": .int(now + 86_400),
            "cnf": ["jwk": holder.jsonValue],
            "status": ["status_list": ["idx": 7, "uri": "https://issuer.example/status/1"]],
            "given_name": "Erika",
            "family_name": "Mustermann",
            "birthdate": "1964-08-12",
            "address": ["street_address": "Heidestraße 17", "locality": "Köln", "country": "DE"],
            "nationalities": ["DE", "FR"],
            "age_equal_or_over": ["18": true, "21": true],
        ]
    }

    static let plan: DisclosurePlan = .object([
        "given_name": .disclosable,
        "family_name": .disclosable,
        "birthdate": .disclosable,
        "address": .disclosable(.object(["street_address": .disclosable, "locality": .disclosable, "country": .disclosable])),
        "nationalities": .disclosable(.array(.disclosable)),
        "age_equal_or_over": .visible(.object(["18": .disclosable, "21": .disclosable])),
    ])

    /// given_name, family_name, birthdate, address (+3), nationalities (+2), 18, 21.
    static let disclosureCount = 12

    struct Parties {
        let issuerKey: PrivateKey
        let issuerJWK: JWK
        let holderKey: PrivateKey
        let holderJWK: JWK
        var issuerKeys: JWKSet { JWKSet(keys: [issuerJWK]) }
    }

    static func parties() throws -> Parties {
        let issuerKey = try PrivateKey(generatingFor: .ES256)
        let holderKey = try PrivateKey(generatingFor: .ES256)
        return Parties(issuerKey: issuerKey, issuerJWK: JWK(publicKey: issuerKey.publicKey, algorithm: .ES256),
                       holderKey: holderKey, holderJWK: JWK(publicKey: holderKey.publicKey, algorithm: .ES256))
    }

    static func issue(_ parties: Parties, decoys: Int = 0) throws -> SDJWT {
        let issuer = SDJWTIssuer(key: parties.issuerKey, algorithm: .ES256, keyID: parties.issuerJWK.kid,
                                 decoysPerDigestArray: decoys)
        return try issuer.issue(claims: claims(holder: parties.holderJWK), plan: plan)
    }
}
