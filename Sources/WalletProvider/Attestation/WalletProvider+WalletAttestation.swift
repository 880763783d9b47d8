import Cryptography
import JOSE
import JSON
import OAuth
import SDJWT
import Store
import Support

/// The formats of `<wp>/wallet-attestations` (item 6, second wire format).
public enum WalletAttestationFormat: String, Sendable {
    case jwt
    case sdJWT = "dc+sd-jwt"
    case mdoc = "mso_mdoc"
}

extension WalletProvider {
    /// The `typ` of the wallet attestation (OAuth 2.0 Attestation-Based Client Authentication §5.1).
    public static let walletAttestationType = "oauth-client-attestation+jwt"
    /// How far a request's `iat` may lie in the future (clock skew).
    static let requestLeeway: Int64 = 60
    /// Longest a request may be valid (`exp - iat`).
    static let maxRequestLifetime: Int64 = 3_600

    /// Issues a wallet attestation for the instance a request JWT speaks for (issue 20, item 6),
    /// or throws the first failed check in the seed's order:
    /// 1. 400 `bad_request`: malformed, claim missing, the other endpoint's `typ` (`parse`);
    /// 2. 403 `invalid_request`: the request's signature (by its `cnf.jwk`, header `kid` = that
    ///    key's thumbprint), times, the nonce (unknown, expired, used);
    /// 3. 404 `not_found`: no instance with this `hardware_key_tag`;
    /// 4. 403 `invalid_request`: the instance revoked or uninstalled, the hardware signature,
    ///    the key attestation (a development one must be made for this instance's hardware
    ///    key and tag and this nonce), `iss`, `aud`;
    /// 5. 403 `integrity_check_error`: the key attestation says the device fails integrity.
    /// The nonce is spent and the instance becomes `operational` (from `installed`) in one
    /// transaction; a refused request burns nothing.
    public func issueWalletAttestation(_ request: WalletAttestationRequest) throws(WalletProviderError) -> String {
        try issueWalletAttestations(request, formats: [.jwt])[0].value
    }

    /// The same checks, then one attestation per format asked for (all with the same claims
    /// and key), signed before the nonce is spent so a signing failure burns nothing.
    public func issueWalletAttestations(_ request: WalletAttestationRequest, formats: [WalletAttestationFormat])
        throws(WalletProviderError) -> [(format: WalletAttestationFormat, value: String)] {
        let now = clock.now()
        do throws(JOSEError) {
            guard request.jws.keyID == request.keyThumbprint else {
                throw .malformed("the header kid must be the thumbprint of cnf.jwk")
            }
            try request.jws.verify(keys: JWKSet(keys: [request.key.adding(["kid": .string(request.keyThumbprint)])]),
                                   allowList: [.ES256], expectedType: request.jws.type)
        } catch {
            throw .refused("the assertion's signature: \(error)")
        }
        guard request.issuedAt <= now + Self.requestLeeway, request.expiresAt > now,
              request.expiresAt - request.issuedAt <= Self.maxRequestLifetime else {
            throw .refused("the assertion's iat and exp are out of range")
        }
        guard nonces.issueTime(of: request.nonce, now: now) != nil else {
            throw .refused("the \(request.nonceMember) is unknown or expired; get one from \(urls.nonce)")
        }
        let instances = WalletInstanceRepository(database: database)
        if try storing({ () throws(StoreError) in
            try instances.replayRecorded(issuer: entityID, purpose: Self.noncePurpose, jti: request.nonce)
        }) {
            throw .refused("the \(request.nonceMember) was already used")
        }
        guard let instance = try storing({ () throws(StoreError) in try instances.find(provider: entityID, id: request.hardwareKeyTag) }) else {
            throw WalletProviderError(.notFound, "no wallet instance has this hardware_key_tag")
        }
        guard instance.revokedAt == nil, instance.state != WalletInstanceState.uninstalled.rawValue else {
            throw .refused("this wallet instance is \(instance.revokedAt != nil ? "revoked" : "uninstalled")")
        }
        try refuseTransferredAccount(of: instance)
        guard let hardwareKey = Self.hardwareKey(of: instance) else {
            throw WalletProviderError(.serverError, "the instance's hardware key is unreadable", cause: instance.id)
        }
        let signed = HardwareSignature.clientData(nonceMember: request.nonceMember, nonce: request.nonce,
                                                  jwkThumbprint: request.keyThumbprint)
        // An iOS instance may sign with an App Attest assertion, whose counter must rise.
        var assertionCounter: Int64?
        if instance.format == DeviceKeyAttestationFormat.apple.rawValue, let assertion = AppAttestAssertion.decode(request.hardwareSignature) {
            try assertion.verify(clientData: signed, key: hardwareKey, appIDs: configuration.appleAppIDs)
            let stored = try storing { () throws(StoreError) in try instances.assertionCounter(provider: entityID, id: instance.id) } ?? 0
            guard Int64(assertion.counter) > stored else {
                throw .refused("hardware_signature: the App Attest assertion's counter \(assertion.counter) does not exceed \(stored)")
            }
            assertionCounter = Int64(assertion.counter)
        } else {
            guard HardwareSignature.verify(request.hardwareSignature, data: signed, key: hardwareKey) else {
                throw .refused("hardware_signature does not verify with the instance's hardware key")
            }
        }
        var integrity = true
        if let keyAttestation = request.keyAttestation {
            integrity = try checkKeyAttestation(keyAttestation, request: request, instance: instance, now: now)
        }
        guard request.issuer == urls.instance(request.keyThumbprint) || request.issuer == request.keyThumbprint else {
            throw .refused("iss must be \(urls.instance(request.keyThumbprint)) (or the bare thumbprint of cnf.jwk)")
        }
        guard request.audience.contains(entityID) else { throw .refused("aud must be \(entityID)") }
        guard integrity else { throw WalletProviderError(.integrityCheckError, "the device failed its integrity check") }

        var attestations: [(format: WalletAttestationFormat, value: String)] = []
        for format in formats {
            switch format {
            case .jwt: attestations.append((format, try signWalletAttestation(key: request.key, thumbprint: request.keyThumbprint, now: now)))
            case .sdJWT: attestations.append((format, try signSDJWTWalletAttestation(key: request.key, thumbprint: request.keyThumbprint, now: now)))
            case .mdoc: attestations.append((format, try signMDocWalletAttestation(key: request.key, thumbprint: request.keyThumbprint, now: now)))
            }
        }
        let spent: Bool
        do {
            spent = try database.transaction { database throws -> Bool in
                let instances = WalletInstanceRepository(database: database)
                if let assertionCounter, try !instances.raiseAssertionCounter(provider: entityID, id: instance.id, to: assertionCounter) {
                    throw AssertionCounterRace()
                }
                guard try nonces.consume(request.nonce, in: NonceRepository(database: database)) else { return false }
                _ = try instances.transition(
                    provider: entityID, id: instance.id, from: WalletInstanceState.installed.rawValue,
                    to: WalletInstanceState.operational.rawValue, now: now)
                // Kept as sent, never checked: a Play Integrity token needs Google's servers.
                if let assertion = request.integrityAssertion {
                    try instances.recordIntegrityAssertion(provider: entityID, id: instance.id, assertion: assertion, now: now)
                }
                return true
            }
        } catch let error as StoreError {
            throw .store(error)
        } catch is AssertionCounterRace {
            throw .refused("hardware_signature: the App Attest assertion's counter was already used")
        } catch {
            throw WalletProviderError(.serverError, "the attestation could not be recorded", cause: "\(error)")
        }
        guard spent else { throw .refused("the \(request.nonceMember) was already used") }
        return attestations
    }

    /// The stored hardware public key, imported into OpenSSL.
    static func hardwareKey(of instance: WalletInstanceRecord) -> PublicKey? {
        guard let object = (try? JSONValue.parse(Array(instance.hardwareJWK.utf8)))?.objectValue else { return nil }
        return try? JWK(json: object).publicKey()
    }

    /// A development key attestation in the request must be made for this instance's hardware
    /// key and tag and bound to this request's nonce; its `device.integrity` is the answer.
    /// Other formats in a request are the device verifiers' (not built yet): refused.
    private func checkKeyAttestation(_ keyAttestation: String, request: WalletAttestationRequest, instance: WalletInstanceRecord,
                                     now: Int64) throws(WalletProviderError) -> Bool {
        let value = JSONValue.string(keyAttestation)
        guard let format = DeviceKeyAttestationFormat.detect(value), let verifier = verifiers[format] else {
            throw .refused("key_attestation: this format is not accepted here")
        }
        let attested = try verifier.verify(value, binding: KeyAttestationBinding(nonce: request.nonce, hardwareKeyTag: instance.id),
                                           now: now)
        guard attested.hardwareKey.thumbprint() == instance.hardwareJWKThumbprint else {
            throw .refused("key_attestation attests another key than the instance's hardware key")
        }
        return attested.device.integrity
    }

    /// The wallet attestation: `typ` `oauth-client-attestation+jwt`, `kid` and `x5c` (the
    /// signing certificate, no root); claims `iss` (this provider), `sub` (the client id:
    /// the key's thumbprint, or the configured fixed one), `cnf.jwk`, `aal`, `iat`, `exp`
    /// (`attestation_lifetime` later), `wallet_name` and `wallet_link`.
    func signWalletAttestation(key: JWK, thumbprint: String, now: Int64) throws(WalletProviderError) -> String {
        let claims = attestationClaims(key: key, thumbprint: thumbprint, now: now)
        var header: [String: JSONValue] = ["x5c": .array(keys.x5c.map(JSONValue.string))]
        if let chain = currentTrustChain(now: now) { header["trust_chain"] = .array(chain.map(JSONValue.string)) }
        do {
            return try JWS.sign(payload: claims, key: keys.signingKey, algorithm: .ES256, keyID: keys.signingJWK.kid ?? "",
                                type: Self.walletAttestationType, extraHeader: header)
        } catch {
            throw WalletProviderError(.serverError, "the wallet attestation could not be signed", cause: "\(error)")
        }
    }

    /// The same claims as an SD-JWT VC (`typ: dc+sd-jwt`, `vct` `<wp>/wallet-attestation`),
    /// `wallet_name` and `wallet_link` selectively disclosable, the rest visible.
    func signSDJWTWalletAttestation(key: JWK, thumbprint: String, now: Int64) throws(WalletProviderError) -> String {
        var claims = attestationClaims(key: key, thumbprint: thumbprint, now: now)
        claims["vct"] = .string(urls.walletAttestationType)
        do {
            return try SDJWTIssuer(key: keys.signingKey, algorithm: .ES256, keyID: keys.signingJWK.kid, x5c: keys.x5c)
                .issueCompact(claims: claims, plan: .disclosing(["wallet_name", "wallet_link"].filter { claims[$0] != nil }))
        } catch {
            throw WalletProviderError(.serverError, "the SD-JWT VC wallet attestation could not be signed", cause: "\(error)")
        }
    }

    /// The claims every format carries.
    func attestationClaims(key: JWK, thumbprint: String, now: Int64) -> [String: JSONValue] {
        let subject: String
        switch configuration.clientID {
        case .thumbprint: subject = thumbprint
        case .fixed(let id): subject = id
        }
        var claims: [String: JSONValue] = [
            "iss": .string(entityID), "sub": .string(subject), "cnf": ["jwk": key.jsonValue], "aal": .string(configuration.aal),
            "iat": .int(now), "exp": .int(now + configuration.attestationLifetime), "wallet_name": .string(configuration.walletName),
        ]
        if let link = configuration.walletLink { claims["wallet_link"] = .string(link) }
        return claims
    }
}

/// Thrown inside the attestation transaction when a concurrent request took the App Attest
/// counter first: rolls the nonce back.
private struct AssertionCounterRace: Error {}
