import JSON

extension FederationHost {
    /// The owner a Trust Anchor hosted here names for `type` in `trust_mark_owners`. Anchors are
    /// taken in entity-ID order so two anchors naming different owners give a stable answer.
    func trustMarkOwner(of type: String) -> String? {
        entities.values.filter(\.isTrustAnchor).sorted { $0.entityID < $1.entityID }
            .lazy.compactMap { $0.trustMarkOwners[type] }.first
    }

    /// The `trust-mark-delegation+jwt` (section 7.2.1) a mark of `type` by `issuerID` must carry,
    /// or nil when no hosted Trust Anchor names an owner for the type. Section 7.3 step 8 wants a
    /// delegation whenever the type is owned, so one is made even when owner and issuer coincide.
    func trustMarkDelegation(type: String, issuer issuerID: String, issuedAt: Int64,
                             expiresAt: Int64) throws(FederationError) -> String? {
        guard let owner = trustMarkOwner(of: type) else { return nil }
        guard entities[owner] != nil else {
            // A mark without its delegation would fail every verifier, so refuse to issue it.
            throw .serverError("trust mark owner \(owner) of \(type) is not hosted here, so its delegation cannot be signed")
        }
        let claims: [String: JSONValue] = [
            "iss": .string(owner),
            "sub": .string(issuerID),
            "trust_mark_type": .string(type),
            "iat": .int(issuedAt),
            // The delegation only has to cover the mark it travels in.
            "exp": .int(expiresAt),
        ]
        return try keys.signingKey(for: owner).sign(claims, type: FederationType.trustMarkDelegation)
    }
}
