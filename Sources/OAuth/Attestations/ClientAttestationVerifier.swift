import Cryptography
import JOSE
import JSON
import Support

/// Who the client is at PAR and the token endpoint (OAuth 2.0 Attestation-Based Client
/// Authentication, draft-ietf-oauth-attestation-based-client-auth): an attested client (the
/// attestation's `sub`, vouched for by a trusted wallet provider) or a public client that only
/// named itself (when attestation is not required).
public struct ClientIdentity: Sendable, Equatable {
    /// nil: an anonymous client (pre-authorized code without `client_id`).
    public let clientID: String?
    public let attested: Bool

    public init(clientID: String?, attested: Bool) {
        self.clientID = clientID
        self.attested = attested
    }
}

/// Verifies client attestations and their PoPs for one authorization server (OAuth 2.0
/// Attestation-Based Client Authentication): who may sign them (`trust`), the PoP's audience
/// (`issuer`), window and replay records. The Wallet Provider's token endpoint and the PID
/// Provider's share it.
public struct ClientAttestationVerifier: Sendable {
    /// The PoP's `aud`: this authorization server's issuer identifier.
    public let issuer: String
    public let trust: AttestationIssuerTrust
    /// Without the headers a client is refused (true) or public (false).
    public let requireAttestation: Bool
    /// Seconds a PoP's `iat` may lie from now.
    public let proofWindow: Int64
    public let clock: any Clock
    /// Seen PoP `jti`s (purpose `client-attestation-pop`).
    public let replays: ReplayRecords
    /// Attestations whose signature verified (see `VerifiedClientAttestations`), shared by the
    /// copies of this value.
    let verified = VerifiedClientAttestations()

    public init(issuer: String, trust: AttestationIssuerTrust, requireAttestation: Bool, proofWindow: Int64, clock: any Clock,
                replayStore: any ReplayStore) {
        self.issuer = issuer
        self.trust = trust
        self.requireAttestation = requireAttestation
        self.proofWindow = proofWindow
        self.clock = clock
        replays = ReplayRecords(issuer: issuer, purpose: "client-attestation-pop", store: replayStore)
    }

    /// Authenticates the client from the `OAuth-Client-Attestation` and
    /// `OAuth-Client-Attestation-PoP` headers (both or neither). `clientID` is the request's
    /// `client_id` parameter; with an attestation it must equal the attestation's `sub` when
    /// given. Without the headers the client is public (`client_id` as sent, possibly none),
    /// unless `requireAttestation`. Every refusal is `invalid_client` (401).
    ///
    /// The attestation (§5.1): `typ` `oauth-client-attestation+jwt`, ES256, `iss`, `sub`, `exp`
    /// in the future, `cnf.jwk`; signed by a key of a trusted wallet provider: its `x5c` chains
    /// to one of `trust.roots`, or its `iss` is an entity with `wallet_provider` metadata
    /// whose trust chain reaches one of `trust.trustAnchors` (keys from the resolved `jwks`).
    /// The PoP (§5.2): `typ` `oauth-client-attestation-pop+jwt`, ES256, signed by `cnf.jwk`,
    /// `aud` = this issuer, `jti` never seen before, `iat` within `proofWindow`, `iss` (when
    /// present) = the client. This server issues no challenges, so a `challenge` is not checked.
    public func authenticate(attestation: String?, pop: String?, clientID: String?) throws(OAuthError) -> ClientIdentity {
        func refuse(_ why: String) -> OAuthError { OAuthError(.invalidClient, why) }
        guard attestation != nil || pop != nil else {
            if requireAttestation { throw refuse("client attestation is required") }
            return ClientIdentity(clientID: clientID, attested: false)
        }
        guard let attestation, let pop else {
            throw refuse("OAuth-Client-Attestation and OAuth-Client-Attestation-PoP go together")
        }
        let now = clock.now()
        // 1. The attestation, signed by a wallet provider we trust.
        let (subject, instanceKey) = try attestedInstance(attestation, now: now, refuse)
        if let clientID, clientID != subject { throw refuse("client_id does not match the attestation's sub") }

        // 2. The PoP, signed by the instance key the attestation names.
        let (popJWS, popClaims) = try parseJWT(pop, what: "attestation PoP", refuse)
        guard popJWS.type == "oauth-client-attestation-pop+jwt" else {
            throw refuse("PoP typ must be oauth-client-attestation-pop+jwt")
        }
        let popKey = popJWS.keyID.map { instanceKey.adding(["kid": .string($0)]) } ?? instanceKey
        do throws(JOSEError) {
            try popJWS.verify(keys: JWKSet(keys: [popKey]), allowList: [.ES256], expectedType: "oauth-client-attestation-pop+jwt",
                              requireKeyID: false)
        } catch {
            throw refuse("attestation PoP signature: \(error)")
        }
        let audiences = popClaims["aud"].map { $0.stringValue.map { [$0] } ?? $0.stringArray ?? [] } ?? []
        guard audiences.contains(issuer) else { throw refuse("PoP aud must be \(issuer)") }
        guard let jti = popClaims["jti"]?.stringValue, !jti.isEmpty, jti.utf8.count <= 256 else { throw refuse("PoP jti is missing") }
        guard let iat = popClaims["iat"]?.intValue, abs(now - iat) <= proofWindow else {
            throw refuse("PoP iat is missing or outside the accepted window")
        }
        if let exp = popClaims["exp"] { guard let t = exp.intValue, t > now else { throw refuse("the PoP has expired") } }
        if let iss = popClaims["iss"] { guard iss.stringValue == subject else { throw refuse("PoP iss must be the client_id") } }
        let fresh = try replays.firstUse(subject + " " + jti, expiresAt: max(now, iat) + proofWindow + 1)
        guard fresh else { throw refuse("attestation PoP replayed (jti already used)") }
        return ClientIdentity(clientID: subject, attested: true)
    }

    /// The attestation's `sub` and `cnf.jwk` once it passed every check (§5.1, see
    /// `authenticate`). An attestation whose signature verified before (`verified`) is not
    /// parsed or verified again, but its times and its signer's trust are checked now.
    private func attestedInstance(_ attestation: String, now: Int64,
                                  _ refuse: (String) -> OAuthError) throws(OAuthError) -> (subject: String, key: JWK) {
        if let known = verified.lookup(attestation) {
            try Self.checkTimes(exp: known.expiresAt, nbf: known.notBefore, iat: known.issuedAt, now: now, refuse)
            if let signer = try? trust.signer(x5c: known.x5c, keyID: known.keyID, issuer: known.attester, now: now),
               signer.keys.keys.contains(where: { $0.thumbprint() == known.signerThumbprint }) {
                return (known.subject, known.instanceKey)
            }
            // No longer trusted (or not with that key): checked in full below, which says why.
        }
        let (jws, claims) = try parseJWT(attestation, what: "client attestation", refuse)
        guard jws.type == "oauth-client-attestation+jwt" else { throw refuse("attestation typ must be oauth-client-attestation+jwt") }
        guard let attester = claims["iss"]?.stringValue, !attester.isEmpty else { throw refuse("attestation iss is missing") }
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty else { throw refuse("attestation sub is missing") }
        guard let exp = claims["exp"]?.intValue else { throw refuse("attestation exp is missing") }
        var nbf: Int64?
        if let value = claims["nbf"] { guard let t = value.intValue else { throw refuse("attestation not yet valid") }; nbf = t }
        var iat: Int64?
        if let value = claims["iat"] { guard let t = value.intValue else { throw refuse("attestation iat is in the future") }; iat = t }
        try Self.checkTimes(exp: exp, nbf: nbf, iat: iat, now: now, refuse)
        guard let cnf = claims["cnf"]?["jwk"]?.objectValue else { throw refuse("attestation cnf.jwk is missing") }
        let instanceKey: JWK
        do throws(JOSEError) { instanceKey = try JWK(json: cnf) } catch { throw refuse("attestation cnf.jwk: \(error)") }
        let attesterKeys: JWKSet
        do throws(AttestationIssuerTrust.Refusal) {
            attesterKeys = try trust.signer(of: jws, issuer: attester, now: now).keys
        } catch {
            throw refuse("client attestation: \(error.description)")
        }
        let signerKey: JWK
        do throws(JOSEError) {
            signerKey = try jws.verify(keys: attesterKeys, allowList: [.ES256], expectedType: "oauth-client-attestation+jwt",
                                       requireKeyID: false)
        } catch {
            throw refuse("client attestation signature: \(error)")
        }
        verified.store(.init(compact: attestation, attester: attester, subject: subject, expiresAt: exp, notBefore: nbf, issuedAt: iat,
                             instanceKey: instanceKey, x5c: jws.header["x5c"], keyID: jws.keyID,
                             signerThumbprint: signerKey.thumbprint()))
        return (subject, instanceKey)
    }

    /// `exp` in the future; `nbf` and `iat`, when present, not more than a minute ahead.
    private static func checkTimes(exp: Int64, nbf: Int64?, iat: Int64?, now: Int64,
                                   _ refuse: (String) -> OAuthError) throws(OAuthError) {
        guard exp > now else { throw refuse("the client attestation has expired") }
        if let nbf { guard nbf <= now + 60 else { throw refuse("attestation not yet valid") } }
        if let iat { guard iat <= now + 60 else { throw refuse("attestation iat is in the future") } }
    }

    private func parseJWT(_ compact: String, what: String,
                          _ refuse: (String) -> OAuthError) throws(OAuthError) -> (JWS, [String: JSONValue]) {
        do throws(JOSEError) {
            return try JWS.parseClaims(compact)
        } catch {
            throw refuse("\(what): \(error)")
        }
    }
}
