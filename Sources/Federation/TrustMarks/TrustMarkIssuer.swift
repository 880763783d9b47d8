import JSON

extension FederationHost {
    /// Every mark local issuers give `subjectID`, for the `trust_marks` claim of its entity
    /// configuration. Revoked marks are left out; a mark that fails to issue is logged and left
    /// out too, because one broken issuer must not take the subject's configuration down.
    public func trustMarkEntries(for subjectID: String) -> [TrustMarkEntry] {
        guard let issuances = issuancesBySubject[subjectID] else { return [] }
        var entries: [TrustMarkEntry] = []
        var seen: Set<String> = []
        for (issuerID, issuance) in issuances where seen.insert(issuerID + " " + issuance.trustMarkType).inserted {
            do {
                let jwt = try trustMark(issuer: issuerID, type: issuance.trustMarkType, subject: subjectID)
                entries.append(TrustMarkEntry(trustMarkType: issuance.trustMarkType, trustMark: jwt))
            } catch {
                if case .notFound = error { continue }
                logger.error("trust mark \(issuance.trustMarkType) by \(issuerID) for \(subjectID) not issued: \(error)")
            }
        }
        return entries
    }

    /// The `trust-mark+jwt` (section 7.1) `issuerID` gives `subject` for `type`; what the trust
    /// mark endpoint (section 8.6) serves. Signed once per lifetime and cached; the revocation
    /// check runs before the cache so a revoked mark stops being handed out at once.
    public func trustMark(issuer issuerID: String, type: String, subject: String) throws(FederationError) -> String {
        try signedTrustMark(issuer: issuerID, type: type, subject: subject).compact
    }

    func signedTrustMark(issuer issuerID: String, type: String, subject: String) throws(FederationError) -> SignedJWT {
        guard let issuer = entities[issuerID],
              let issuance = issuer.trustMarksIssued.first(where: { $0.trustMarkType == type && $0.subjects.contains(subject) })
        else { throw .notFound("\(issuerID) issues no trust mark of type \(type) to \(subject)") }
        if try isTrustMarkRevoked(issuer: issuerID, type: type, subject: subject) {
            throw .notFound("the \(type) trust mark of \(subject) has been revoked")
        }
        let now = now()
        return try cache.value(for: .trustMark(issuer: issuerID, type: type, subject: subject), now: now, type: FederationType.trustMark) { () throws(FederationError) -> (String, Int64) in
            let exp = now + (issuance.lifetime ?? issuer.lifetime)
            var claims: [String: JSONValue] = [
                "iss": .string(issuerID),
                "sub": .string(subject),
                "trust_mark_type": .string(type),
                "iat": .int(now),
                "exp": .int(exp),
            ]
            if let logo = issuance.logoURI { claims["logo_uri"] = .string(logo) }
            if let ref = issuance.ref { claims["ref"] = .string(ref) }
            if let delegation = try trustMarkDelegation(type: type, issuer: issuerID, issuedAt: now, expiresAt: exp) {
                claims["delegation"] = .string(delegation)
            }
            let jwt = try keys.signingKey(for: issuerID).sign(claims, type: FederationType.trustMark)
            try recordIssuedTrustMark(jwt, issuer: issuerID, type: type, subject: subject, issuedAt: now, expiresAt: exp)
            return (jwt, SignedStatementCache.refreshTime(iat: now, exp: exp))
        }
    }

    /// Revokes every mark of `type` that `issuerID` gave `subject`, and refuses new ones until
    /// lifted; returns how many issued marks it flagged. Entity configurations already cached
    /// keep the mark until the host is replaced (see `FederationHost`), but the status endpoint
    /// reports it revoked at once.
    @discardableResult
    public func revokeTrustMark(issuer issuerID: String, type: String, subject: String, reason: String) throws(FederationError) -> Int {
        guard let issuer = entities[issuerID], issuer.trustMarksIssued.contains(where: { $0.trustMarkType == type }) else {
            throw .notFound("\(issuerID) issues no trust marks of type \(type)")
        }
        do {
            return try trustMarkRepository.revoke(issuer: issuerID, trustMarkType: type, subject: subject, at: now(), reason: reason)
        } catch {
            throw .serverError("revoking the trust mark failed: \(error)")
        }
    }
}
