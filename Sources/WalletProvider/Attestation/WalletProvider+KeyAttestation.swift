import Cryptography
import JOSE
import JSON
import Store
import Support

/// A request for a key attestation of wallet keys (issue 20, item 7), read once: `typ`
/// `wp-kar+jwt`, ES256 by the instance's hardware key, header `kid` = its `hardware_key_tag`;
/// claims `iss` = `<wp>/instance/<hardware_key_tag>`, `aud` = the provider, `iat`, `nonce` (from
/// `<wp>/nonce`), `keys` (1 to 10 public JWKs) and optionally `c_nonce` (the credential
/// issuer's, copied into the attestation's `nonce`).
public struct KeyAttestationRequest: Sendable {
    public static let type = "wp-kar+jwt"
    public static let maxKeys = 10

    public let jws: JWS
    public let hardwareKeyTag: String
    public let issuer: String
    public let audience: [String]
    public let issuedAt: Int64
    public let nonce: String
    public let keys: [JWK]
    public let cNonce: String?

    public static func parse(_ compact: String) throws(WalletProviderError) -> KeyAttestationRequest {
        let jws: JWS
        let claims: [String: JSONValue]
        do throws(JOSEError) { (jws, claims) = try JWS.parseClaims(compact) } catch {
            throw .badRequest("assertion is not a readable JWT: \(error)")
        }
        guard jws.type == type else { throw .badRequest("the assertion's typ must be \(type)") }
        guard let tag = jws.keyID, !tag.isEmpty else { throw .badRequest("the header kid must be the hardware_key_tag") }
        let read = DeviceRequestClaims(claims: claims)
        let iat = try read.issuedAt()
        let audience = try read.audience()
        guard let list = claims["keys"]?.arrayValue, !list.isEmpty, list.count <= maxKeys else {
            throw .badRequest("keys must be an array of 1 to \(maxKeys) public JWKs")
        }
        var keys: [JWK] = []
        var seen = Set<String>()
        for (i, item) in list.enumerated() {
            do throws(JOSEError) {
                let key = try JWK(json: item.objectValue ?? [:]).keyMembersOnly
                _ = try key.publicKey()
                guard seen.insert(key.thumbprint()).inserted else { throw .invalidKey("repeats a key") }
                keys.append(key)
            } catch {
                throw .badRequest("keys[\(i)]: \(error)")
            }
        }
        var cNonce: String?
        if claims["c_nonce"] != nil { cNonce = try read.string("c_nonce") }
        return KeyAttestationRequest(jws: jws, hardwareKeyTag: tag, issuer: try read.string("iss"), audience: audience, issuedAt: iat,
                                     nonce: try read.string("nonce"), keys: keys, cNonce: cNonce)
    }
}

extension WalletProvider {
    /// Attack potential resistance (OpenID4VCI 1.0 Appendix D.2) by the device's key storage:
    /// a development (software) key is basic, an Android TEE key moderate, StrongBox and the
    /// Secure Enclave high.
    static func resistance(securityLevel: String) -> String {
        SecurityLevel(rawValue: securityLevel)?.keyStorage ?? "iso_18045_basic"
    }

    /// `POST <wp>/key-attestations` (item 7): a `key-attestation+jwt` (Appendix D.1) for the
    /// request's keys, signed by this provider (`x5c` = the signing certificate), with
    /// `key_storage` and `user_authentication` from the instance's device facts. Errors: 400
    /// `bad_request` (shape), 404 `not_found` (unknown tag), 403 `invalid_request` (signature,
    /// revoked or uninstalled instance, `iss`, `aud`, `iat`, nonce).
    public func issueKeyAttestation(_ request: KeyAttestationRequest) throws(WalletProviderError) -> String {
        let now = clock.now()
        let instances = WalletInstanceRepository(database: database)
        guard let instance = try storing({ () throws(StoreError) in try instances.find(provider: entityID, id: request.hardwareKeyTag) }) else {
            throw WalletProviderError(.notFound, "no wallet instance has this hardware_key_tag")
        }
        guard let hardwareKey = Self.hardwareKey(of: instance) else {
            throw WalletProviderError(.serverError, "the instance's hardware key is unreadable", cause: instance.id)
        }
        do throws(JOSEError) {
            try request.jws.verify(keys: JWKSet(keys: [JWK(publicKey: hardwareKey).adding(["kid": .string(instance.id)])]),
                                   allowList: [.ES256], expectedType: KeyAttestationRequest.type)
        } catch {
            throw .refused("the assertion's signature: \(error)")
        }
        guard instance.revokedAt == nil, instance.state != WalletInstanceState.uninstalled.rawValue else {
            throw .refused("this wallet instance is \(instance.revokedAt != nil ? "revoked" : "uninstalled")")
        }
        try refuseTransferredAccount(of: instance)
        guard request.issuer == urls.instance(instance.id) else { throw .refused("iss must be \(urls.instance(instance.id))") }
        guard request.audience.contains(entityID) else { throw .refused("aud must be \(entityID)") }
        guard request.issuedAt <= now + Self.requestLeeway, now - request.issuedAt <= Self.maxRequestLifetime else {
            throw .refused("iat is out of range")
        }
        guard nonces.issueTime(of: request.nonce, now: now) != nil else {
            throw .refused("the nonce is unknown or expired; get one from \(urls.nonce)")
        }
        let attestation = try signKeyAttestation(keys: request.keys, cNonce: request.cNonce, instance: instance, now: now)
        guard try storing({ () throws(StoreError) in try nonces.consume(request.nonce, in: NonceRepository(database: database)) }) else {
            throw .refused("the nonce was already used")
        }
        // Item 8: which instance these keys belong to, so a PID issued to one of them here
        // makes that instance `valid`.
        try storing { () throws(StoreError) in
            try instances.recordAttestedKeys(provider: entityID, instance: instance.id, thumbprints: request.keys.map { $0.thumbprint() }, now: now)
        }
        return attestation
    }

    /// A `key-attestation+jwt` (Appendix D.1) for `keys`, signed by this provider (`x5c` = the
    /// signing certificate), `key_storage` and `user_authentication` from the instance's
    /// device facts, `nonce` = the credential issuer's c_nonce when given. Shared by
    /// `<wp>/key-attestations` and the NL instructions (keys the provider holds).
    public func signKeyAttestation(keys attested: [JWK], cNonce: String?, instance: WalletInstanceRecord,
                                   now: Int64) throws(WalletProviderError) -> String {
        let level = (try? JSONValue.parse(Array(instance.deviceFacts.utf8)))?.objectValue?["security_level"]?.stringValue ?? "software"
        let resistance = Self.resistance(securityLevel: level)
        var claims: [String: JSONValue] = [
            "iss": .string(entityID), "iat": .int(now), "exp": .int(now + configuration.attestationLifetime),
            "attested_keys": .array(attested.map(\.jsonValue)),
            "key_storage": [.string(resistance)], "user_authentication": [.string(resistance)],
        ]
        if let cNonce { claims["nonce"] = .string(cNonce) }
        do {
            return try JWS.sign(payload: claims, key: keys.signingKey, algorithm: .ES256, keyID: keys.signingJWK.kid ?? "",
                                type: "key-attestation+jwt", extraHeader: ["x5c": .array(keys.x5c.map(JSONValue.string))])
        } catch {
            throw WalletProviderError(.serverError, "the key attestation could not be signed", cause: "\(error)")
        }
    }
}
