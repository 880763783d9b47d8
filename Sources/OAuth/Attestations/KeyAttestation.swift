import Cryptography
import JOSE
import JSON

/// A key attestation that passed every check (OpenID4VCI 1.0 Appendix D.1): a wallet
/// provider's statement that the `attestedKeys` live in storage of the stated strength. It
/// travels in a `jwt` proof's `key_attestation` header (Appendix F.1) or alone as an
/// `attestation` proof (Appendix F.3). Service-independent: it depends on nothing but the
/// JWT and an `AttestationIssuerTrust`.
public struct KeyAttestation: Sendable, Equatable {
    public static let type = "key-attestation+jwt"
    /// Signature algorithms accepted (HAIP 1.0: ES256); never `none` or a MAC.
    public static let algorithms: Set<SignatureAlgorithm> = [.ES256]
    /// How far `iat` may lie in the future (clock skew between wallet provider and us).
    public static let skew: Int64 = 60

    /// The attestation's `iss`, or its `x5c` leaf's subject when it has no `iss`.
    public let issuer: String
    /// `attested_keys`, key members only (what a credential is bound to).
    public let attestedKeys: [JWK]
    /// `key_storage` and `user_authentication` (Appendix D.2 values such as `iso_18045_high`).
    public let keyStorage: [String]?
    public let userAuthentication: [String]?
    /// `nonce`: a `c_nonce` of this issuer when present.
    public let nonce: String?

    /// Why a key attestation is refused; the credential endpoint answers `invalid_proof`.
    public struct Refusal: Error, CustomStringConvertible, Sendable {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Parses and checks a compact key attestation: `typ` `key-attestation+jwt`, an allowed
    /// `alg`, a signer `trust` vouches for (x5c chain to a root, or a federation-trusted wallet
    /// provider named by `iss`), `iat` present and not more than `skew` in the future, `exp`
    /// (optional, Appendix D.1) not passed, `attested_keys` a non-empty array of distinct public
    /// JWKs (a private member is refused), `key_storage` / `user_authentication` arrays of
    /// strings, `nonce` a non-empty string when present.
    public static func verify(_ compact: String, trust: AttestationIssuerTrust, now: Int64) throws(Refusal) -> KeyAttestation {
        let jws: JWS
        let claims: [String: JSONValue]
        do throws(JOSEError) { (jws, claims) = try JWS.parseClaims(compact) } catch { throw Refusal("malformed: \(error)") }
        // Checked before any trust work, so a wrong token costs nothing; `verify` below checks
        // `typ` and `alg` again as part of the signature check.
        guard let typ = jws.type?.lowercased(), typ == Self.type || typ == "application/" + Self.type else {
            throw Refusal("typ must be \(Self.type)")
        }
        guard let alg = jws.header["alg"]?.stringValue, let algorithm = SignatureAlgorithm(rawValue: alg),
              algorithms.contains(algorithm) else {
            throw Refusal("alg must be one of \(algorithms.map(\.rawValue).sorted().joined(separator: ", "))")
        }
        if let iss = claims["iss"], iss.stringValue?.isEmpty != false { throw Refusal("iss must be a non-empty string") }
        let issuer = claims["iss"]?.stringValue
        let signer: AttestationIssuerTrust.Signer
        do throws(AttestationIssuerTrust.Refusal) { signer = try trust.signer(of: jws, issuer: issuer, now: now) } catch {
            throw Refusal(error.description)
        }
        do throws(JOSEError) {
            try jws.verify(keys: signer.keys, allowList: algorithms, expectedType: Self.type, requireKeyID: false)
        } catch {
            throw Refusal("signature: \(error)")
        }
        guard let iat = claims["iat"]?.intValue else { throw Refusal("iat must be a number") }
        guard iat <= now + skew else { throw Refusal("iat is in the future") }
        if let exp = claims["exp"] {
            guard let t = exp.intValue else { throw Refusal("exp must be a number") }
            guard t > now else { throw Refusal("the key attestation has expired") }
        }
        guard let list = claims["attested_keys"]?.arrayValue, !list.isEmpty else {
            throw Refusal("attested_keys must be a non-empty array of JWKs")
        }
        var keys: [JWK] = []
        var thumbprints = Set<String>()
        for (i, item) in list.enumerated() {
            guard let object = item.objectValue else { throw Refusal("attested_keys[\(i)] must be a JWK object") }
            let key: JWK
            do throws(JOSEError) { key = try JWK(json: object).keyMembersOnly } catch {
                throw Refusal("attested_keys[\(i)]: \(error)")
            }
            guard thumbprints.insert(key.thumbprint()).inserted else { throw Refusal("attested_keys[\(i)] repeats a key") }
            keys.append(key)
        }
        let keyStorage = try stringArray(claims, "key_storage")
        let userAuthentication = try stringArray(claims, "user_authentication")
        var nonce: String?
        if let value = claims["nonce"] {
            guard let text = value.stringValue, !text.isEmpty else { throw Refusal("nonce must be a non-empty string") }
            nonce = text
        }
        return KeyAttestation(issuer: signer.name, attestedKeys: keys, keyStorage: keyStorage,
                              userAuthentication: userAuthentication, nonce: nonce)
    }

    private static func stringArray(_ claims: [String: JSONValue], _ name: String) throws(Refusal) -> [String]? {
        guard let value = claims[name] else { return nil }
        guard let list = value.stringArray else { throw Refusal("\(name) must be an array of strings") }
        return list
    }

    /// Nil when the attestation meets `requirement`, else why not (Appendix D.2: the wallet's
    /// `key_storage` must list one of the required values, likewise `user_authentication`).
    public func unmet(_ requirement: KeyAttestationRequirement) -> String? {
        if let required = requirement.keyStorage, !required.isEmpty,
           !(keyStorage ?? []).contains(where: required.contains) {
            return "key_storage must include one of \(required.joined(separator: ", "))"
        }
        if let required = requirement.userAuthentication, !required.isEmpty,
           !(userAuthentication ?? []).contains(where: required.contains) {
            return "user_authentication must include one of \(required.joined(separator: ", "))"
        }
        return nil
    }
}

/// `key_attestations_required` (OpenID4VCI 1.0 §12.2.4, Appendix D.2): the credential
/// configuration wants every proof key attested, and, when the lists are given, attested with
/// at least one of the named attack-potential resistance levels (`iso_18045_high`, ...).
public struct KeyAttestationRequirement: Sendable, Equatable {
    public var keyStorage: [String]?
    public var userAuthentication: [String]?

    public init(keyStorage: [String]? = nil, userAuthentication: [String]? = nil) {
        self.keyStorage = keyStorage
        self.userAuthentication = userAuthentication
    }

    /// The metadata object: an empty object when only "some key attestation" is required.
    public var json: JSONValue {
        var object: [String: JSONValue] = [:]
        if let keyStorage { object["key_storage"] = .array(keyStorage.map(JSONValue.string)) }
        if let userAuthentication { object["user_authentication"] = .array(userAuthentication.map(JSONValue.string)) }
        return .object(object)
    }

    /// `{key_storage?: [strings], user_authentication?: [strings]}`; unknown members are errors.
    public static func parse(_ reader: JSONReader) throws(JSONReadError) -> KeyAttestationRequirement {
        try reader.rejectUnknown(allowed: ["key_storage", "user_authentication"])
        return KeyAttestationRequirement(keyStorage: try reader.optionalStringArray("key_storage"),
                                         userAuthentication: try reader.optionalStringArray("user_authentication"))
    }
}
