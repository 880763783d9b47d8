extension FederationHost {
    /// Entities holding a valid mark of `type` from `issuerID` (the Trust Marked Entities
    /// Listing, section 8.5), sorted; only `subject` when given.
    ///
    /// Marks are signed on demand, so "issued and still valid" covers both the subjects the
    /// issuer is configured to mark (a mark is theirs for the asking) and subjects whose recorded
    /// marks have not expired yet although they were dropped from the configuration; revoked
    /// ones are left out. A type this issuer does not issue at all is 404 `not_found` rather
    /// than an empty list: section 8.5 only defines the filter for types the responder issues,
    /// and a silent `[]` would hide a misspelt type from the caller.
    public func trustMarkedEntities(issuer issuerID: String, type: String, subject: String?) throws(FederationError) -> [String] {
        guard let issuer = entities[issuerID] else { throw .notFound("no trust mark issuer \(issuerID) here") }
        let issuances = issuer.trustMarksIssued.filter { $0.trustMarkType == type }
        guard !issuances.isEmpty else { throw .notFound("\(issuerID) issues no trust marks of type \(type)") }

        var candidates = Set(issuances.flatMap(\.subjects))
        if let subject { candidates = candidates.contains(subject) ? [subject] : [] }
        var holders: Set<String> = []
        for s in candidates where try !isTrustMarkRevoked(issuer: issuerID, type: type, subject: s) {
            holders.insert(s)
        }
        do {
            for s in try trustMarkRepository.activeSubjects(issuer: issuerID, trustMarkType: type, now: now())
            where subject == nil || s == subject {
                holders.insert(s)
            }
        } catch {
            throw .serverError("reading issued trust marks failed: \(error)")
        }
        return holders.sorted()
    }
}
