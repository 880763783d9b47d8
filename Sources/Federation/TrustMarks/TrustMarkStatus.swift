import JOSE
import JSON
import Store

/// The `status` values of a Trust Mark Status Response (section 8.4.2).
public enum TrustMarkStatus: String, Sendable {
    case active, expired, revoked, invalid
}

extension FederationHost {
    /// The signed `trust-mark-status-response+jwt` (section 8.4) about `jwt`. Never cached: it
    /// echoes the submitted mark and must reflect a revocation made a moment ago.
    ///
    /// Which answer for which mark (section 8.4.2):
    /// - a mark naming another issuer, or one this issuer has no record of, is "an unknown Trust
    ///   Mark, something it did not issue or is not aware of": HTTP 404 `not_found`, no JWT;
    /// - a mark that cannot be parsed, has the wrong `typ` or malformed claims, or whose signature
    ///   does not verify with this issuer's keys is `invalid` ("signature validation failed or
    ///   another error was detected"): those are the errors the status exists to report, and
    ///   a tampered copy of a real mark is exactly what a caller wants told apart;
    /// - otherwise `revoked` before `expired` (a revocation is the stronger news), then `active`.
    public func trustMarkStatus(issuer issuerID: String, trustMark jwt: String) throws(FederationError) -> String {
        guard let issuer = entities[issuerID], issuer.issuesTrustMarks else {
            throw .notFound("\(issuerID) issues no trust marks")
        }
        let status = try evaluateTrustMark(jwt, issuer: issuerID)
        let claims: [String: JSONValue] = [
            "iss": .string(issuerID),
            "iat": .int(now()),
            "trust_mark": .string(jwt),
            "status": .string(status.rawValue),
        ]
        return try keys.signingKey(for: issuerID).sign(claims, type: FederationType.trustMarkStatusResponse)
    }

    func evaluateTrustMark(_ jwt: String, issuer issuerID: String) throws(FederationError) -> TrustMarkStatus {
        guard let (jws, claims) = try? JWS.parseClaims(jwt) else { return .invalid }
        guard let iss = claims["iss"]?.stringValue else { return .invalid }
        guard iss == issuerID else { throw .notFound("this trust mark was issued by \(iss), not by \(issuerID)") }
        guard FederationType.matches(jws.type, FederationType.trustMark),
              claims["sub"]?.stringValue != nil, claims["trust_mark_type"]?.stringValue != nil,
              claims["iat"]?.intValue != nil
        else { return .invalid }
        var exp: Int64?
        if let e = claims["exp"] {
            guard let value = e.intValue else { return .invalid }
            exp = value
        }
        let keys = try trustMarkVerificationKeys(issuerID)
        do {
            try jws.verify(keys: keys, allowList: AlgorithmPolicy.federationDefault, expectedType: FederationType.trustMark)
        } catch {
            return .invalid
        }

        // Only a byte-identical JWT has a record, and the signature check above already showed
        // this one is ours: a missing record means a database this issuer no longer has.
        let record: TrustMarkRecord?
        do { record = try trustMarkRepository.find(id: TrustMarkID.of(jwt)) } catch {
            throw .serverError("reading issued trust marks failed: \(error)")
        }
        guard let record else { throw .notFound("\(issuerID) has no record of this trust mark") }
        // Revoking flags every stored mark of the (type, subject) and marks recorded later are
        // stored already revoked, so the record alone is authoritative; lifting a revocation
        // deliberately leaves marks reported revoked that way.
        if record.revokedAt != nil { return .revoked }
        if let exp, exp <= now() { return .expired }
        return .active
    }

    /// Keys that may have signed this issuer's marks: the published ones and every historical
    /// key not revoked (a mark outlives a rotation, but not a key compromise).
    func trustMarkVerificationKeys(_ issuerID: String) throws(FederationError) -> JWKSet {
        let current = try keys.publicKeys(for: issuerID)
        let retired = try keys.historicalKeys(for: issuerID).filter { $0.json["revoked"] == nil }
        return JWKSet(keys: current.keys + retired)
    }
}
