import JOSE
import JSON

extension FederationHost {
    /// The Subordinate Statement a superior issues about one of its subordinates (the `fetch`
    /// endpoint, section 8.1).
    public func subordinateStatement(issuer issuerID: String, subject: String) throws(FederationError) -> String {
        try signedSubordinateStatement(issuer: issuerID, subject: subject, parsed: false).compact
    }

    /// The checks run inside the cached build: an entry exists only for a request that passed
    /// them, and the host they depend on never changes under its cache. `parsed`: the caller
    /// builds chains and needs the parsed statement too.
    ///
    /// A cached statement costs one cache lookup with the request's strings; the host's own
    /// copies of the IDs (for the stored key) and whether the subject is a superior (whose
    /// statement is kept parsed) are looked up only when a statement is signed.
    func signedSubordinateStatement(issuer issuerID: String, subject: String, parsed: Bool = false) throws(FederationError) -> SignedJWT {
        let now = now()
        return try cache.statement(
            for: .subordinateStatement(issuer: issuerID, subject: subject), now: now, parsed: parsed, keepParsed: isSuperior(subject),
            stored: {
                // Hosted IDs as the host holds them: the key then shares that storage instead of
                // keeping a request's copy (about 70 bytes for each of 100,000 leaves).
                let hostedSubject = entities[subject]?.entityID
                return (.subordinateStatement(issuer: entities[issuerID]?.entityID ?? issuerID, subject: hostedSubject ?? subject),
                        hostedSubject != nil)
            },
            build: { () throws(FederationError) -> SignedStatementDraft in
                guard let issuer = entities[issuerID], isSuperior(issuerID) else { throw .notFound("no superior \(issuerID) here") }
                if subject == issuerID { throw .invalidRequest("sub must not be the issuer itself; its entity configuration is at \(wellKnownFederationPath)") }
                guard let entry = subordinates(of: issuerID)[subject] else { throw .notFound("\(subject) is not a subordinate of \(issuerID)") }
                let (claims, jwks) = try subordinateStatementClaims(issuer: issuer, entry: entry, now: now)
                return try signStatement(claims, with: keys.signingKey(for: issuerID), jwks: jwks,
                                         refreshAt: SignedStatementCache.refreshTime(iat: now, exp: now + issuer.lifetime))
            }, parse: parsedStatement)
    }

    /// The claims, and the subject's keys as a typed set when they come from the key provider
    /// (a remote subordinate's declared `jwks` is only JSON).
    func subordinateStatementClaims(issuer: HostedEntity, entry: SubordinateEntry, now: Int64) throws(FederationError) -> ([String: JSONValue], JWKSet?) {
        let jwks: JSONValue
        var typed: JWKSet?
        if entities[entry.entityID] != nil {
            let keys = try keys.publicKeys(for: entry.entityID)
            typed = keys
            jwks = keys.jsonValue
        } else if let declared = entry.jwks {
            jwks = declared
        } else {
            throw .serverError("no keys are configured for subordinate \(entry.entityID)")
        }
        var claims: [String: JSONValue] = [
            "iss": .string(issuer.entityID),
            "sub": .string(entry.entityID),
            "iat": .int(now),
            "exp": .int(now + issuer.lifetime),
            "jwks": jwks,
            "source_endpoint": .string(issuer.entityID + FederationEndpoint.fetch.path),
        ]
        let policy = issuer.subordinateDefaults.overridden(by: entry.policy)
        if let p = policy.metadataPolicy { claims["metadata_policy"] = p }
        if let c = policy.metadataPolicyCrit, !c.isEmpty { claims["metadata_policy_crit"] = JSONValue(c) }
        if let m = policy.metadata { claims["metadata"] = m }
        if let c = policy.constraints { claims["constraints"] = c }
        return (claims, typed)
    }
}
