import JOSE
import JSON

/// `credential_response_encryption` of a (deferred) credential request (OpenID4VCI 1.0 §8.2):
/// the wallet's public key and the content encryption it wants. Checked when parsed, so a bad
/// key is refused before anything is issued.
public struct ResponseEncryption: Sendable, Equatable {
    public let key: JWK
    public let encryption: JWEContentEncryption

    /// `{jwk, enc, zip?}`. The JWK must be a public EC key whose `alg` is `ECDH-ES` (§10: the
    /// `alg` member MUST be present and the JWE's `alg` equals it); `enc` one of
    /// `enc_values_supported`; `zip` is refused, since no `zip_values_supported` is advertised.
    static func parse(_ value: JSONValue) throws(IssuanceError) -> ResponseEncryption {
        func refuse(_ why: String) -> IssuanceError {
            IssuanceError(.invalidEncryptionParameters, "credential_response_encryption: \(why)")
        }
        guard let object = value.objectValue else { throw refuse("must be an object") }
        guard let jwkObject = object["jwk"]?.objectValue else { throw refuse("jwk must be a JWK object") }
        let key: JWK
        do throws(JOSEError) {
            key = try JWK(json: jwkObject)
            _ = try key.publicKey()
        } catch {
            throw refuse("jwk: \(error)")
        }
        guard key.kty == "EC" else { throw refuse("jwk must be an EC key (ECDH-ES)") }
        guard let alg = key.algorithm else { throw refuse("jwk must carry alg") }
        guard alg == JWE.ecdhES else { throw refuse("jwk alg \(alg) is not supported; use ECDH-ES") }
        if let use = jwkObject["use"], use.stringValue != "enc" { throw refuse("jwk use must be enc") }
        guard let encName = object["enc"]?.stringValue else { throw refuse("enc must be a string") }
        guard let encryption = JWEContentEncryption(rawValue: encName) else {
            throw refuse("enc \(encName) is not supported; use A128GCM or A256GCM")
        }
        if object["zip"] != nil { throw refuse("compression (zip) is not supported") }
        return ResponseEncryption(key: key, encryption: encryption)
    }
}

/// A Credential Request (OpenID4VCI 1.0 §8.2), decoded once from its JSON. Unknown members are
/// ignored (§8.2: "MUST ignore any unrecognized parameters").
public struct CredentialRequest: Sendable, Equatable {
    /// What is asked for: a `credential_configuration_id` (no `credential_identifiers` in the
    /// token response) or a `credential_identifier` (§6.2).
    public enum Target: Sendable, Equatable {
        case configuration(String)
        case identifier(String)
    }

    /// `proofs`, by proof type (Appendix F): `jwt` proofs, or one key attestation alone.
    public enum Proofs: Sendable, Equatable {
        case jwt([String])
        case attestation(String)
    }

    public let target: Target
    public let proofs: Proofs
    public let responseEncryption: ResponseEncryption?

    /// `injiConfigurations`: the issuer's configurations when `inji_compat` is on, so a request
    /// in Inji's draft-13 shape is mapped onto them (`CredentialRequest+Inji.swift`); nil reads
    /// 1.0 requests only.
    public static func parse(_ value: JSONValue, injiConfigurations: [CredentialConfiguration]? = nil)
        throws(IssuanceError) -> CredentialRequest {
        guard let object = value.objectValue else { throw .invalidCredentialRequest("the request must be a JSON object") }
        if let injiConfigurations, isInjiShape(object) {
            return try parseInji(object, configurations: injiConfigurations)
        }
        let configurationID = try optionalString(object, "credential_configuration_id")
        let identifier = try optionalString(object, "credential_identifier")
        let target: Target
        switch (configurationID, identifier) {
        case (let id?, nil): target = .configuration(id)
        case (nil, let id?): target = .identifier(id)
        case (.some, .some):
            throw .invalidCredentialRequest("credential_configuration_id and credential_identifier must not both be present")
        case (nil, nil):
            throw .invalidCredentialRequest("credential_configuration_id or credential_identifier is required")
        }
        let responseEncryption = try object["credential_response_encryption"].map(ResponseEncryption.parse)
        return CredentialRequest(target: target, proofs: try proofs(object["proofs"]), responseEncryption: responseEncryption)
    }

    /// `proofs`: an object with exactly one member named by its proof type, whose value is a
    /// non-empty array (§8.2): `jwt` (Appendix F.1) or `attestation` (F.3, exactly one key
    /// attestation). The pre-1.0 singular `proof` is not read: without `proofs` the request has
    /// no proof (§8.3.1.2: a missing proofs field is `invalid_proof`).
    static func proofs(_ value: JSONValue?) throws(IssuanceError) -> Proofs {
        guard let value else { throw .invalidProof("proofs is required (proof_types_supported is advertised)") }
        guard let object = value.objectValue else { throw .invalidCredentialRequest("proofs must be an object") }
        guard object.count == 1, let (type, list) = object.first else {
            throw .invalidCredentialRequest("proofs must hold exactly one proof type")
        }
        guard type == "jwt" || type == "attestation" else { throw .invalidProof("proof type \(type) is not supported; use jwt or attestation") }
        guard let items = list.arrayValue else { throw .invalidCredentialRequest("proofs.\(type) must be an array") }
        guard !items.isEmpty else { throw .invalidProof("proofs.\(type) must not be empty") }
        var jwts: [String] = []
        for (i, item) in items.enumerated() {
            guard let jwt = item.stringValue else { throw .invalidProof("proofs.\(type)[\(i)] must be a string (a JWT)") }
            jwts.append(jwt)
        }
        guard type == "attestation" else { return .jwt(jwts) }
        guard jwts.count == 1 else { throw .invalidProof("proofs.attestation must hold exactly one key attestation") }
        return .attestation(jwts[0])
    }

    static func optionalString(_ object: [String: JSONValue], _ name: String) throws(IssuanceError) -> String? {
        guard let value = object[name] else { return nil }
        guard let text = value.stringValue, !text.isEmpty else { throw .invalidCredentialRequest("\(name) must be a non-empty string") }
        return text
    }
}

/// A Deferred Credential Request (§9.1): `transaction_id` and an optional
/// `credential_response_encryption`, which replaces whatever the first request named.
public struct DeferredCredentialRequest: Sendable, Equatable {
    public let transactionID: String
    public let responseEncryption: ResponseEncryption?

    public static func parse(_ value: JSONValue) throws(IssuanceError) -> DeferredCredentialRequest {
        guard let object = value.objectValue else { throw .invalidCredentialRequest("the request must be a JSON object") }
        guard let id = try CredentialRequest.optionalString(object, "transaction_id") else {
            throw .invalidCredentialRequest("transaction_id is required")
        }
        return DeferredCredentialRequest(
            transactionID: id, responseEncryption: try object["credential_response_encryption"].map(ResponseEncryption.parse))
    }
}
