import JOSE
import JSON

extension FederationHost {
    /// The signed Entity Configuration (section 3.1) of a hosted entity, re-signed only when the
    /// cached one nears expiry.
    public func entityConfiguration(of entityID: String) throws(FederationError) -> String {
        try signedEntityConfiguration(of: entityID, parsed: false).compact
    }

    /// `parsed`: the caller builds chains and needs the parsed statement too.
    func signedEntityConfiguration(of entityID: String, parsed: Bool = false) throws(FederationError) -> SignedJWT {
        let now = now()
        return try cache.statement(for: .entityConfiguration(entityID), now: now, parsed: parsed, keepParsed: isSuperior(entityID), build: { () throws(FederationError) -> SignedStatementDraft in
            guard let entity = entities[entityID] else { throw .notFound("no entity \(entityID) here") }
            // The signing key first: loading it also loads the key history that `jwks` is
            // published from, which asked first would be read from the database on its own.
            let key = try keys.signingKey(for: entityID)
            let jwks = try keys.publicKeys(for: entity.entityID)
            let claims = try entityConfigurationClaims(entity, jwks: jwks, now: now)
            // Re-sign before an embedded trust mark expires, so the configuration never carries a stale one.
            var refresh = SignedStatementCache.refreshTime(iat: now, exp: now + entity.lifetime)
            for mark in claims["trust_marks"]?.arrayValue ?? [] {
                if let compact = mark["trust_mark"]?.stringValue, let exp = try? JWS.parse(compact).payload()["exp"]?.intValue {
                    refresh = min(refresh, SignedStatementCache.refreshTime(iat: now, exp: exp))
                }
            }
            return try signStatement(claims, with: key, jwks: jwks, refreshAt: refresh)
        }, parse: parsedStatement)
    }

    /// `jwks`: the entity's published keys (`keys.publicKeys(for:)`).
    func entityConfigurationClaims(_ entity: HostedEntity, jwks: JWKSet, now: Int64) throws(FederationError) -> [String: JSONValue] {
        var claims: [String: JSONValue] = [
            "iss": .string(entity.entityID),
            "sub": .string(entity.entityID),
            "iat": .int(now),
            "exp": .int(now + entity.lifetime),
            "jwks": jwks.jsonValue,
            "metadata": .object(publishedMetadata(of: entity)),
        ]
        if !entity.isTrustAnchor && !entity.authorityHints.isEmpty {
            claims["authority_hints"] = JSONValue(entity.authorityHints)
        }
        let marks = trustMarkEntries(for: entity.entityID)
        if !marks.isEmpty { claims["trust_marks"] = .array(marks.map(\.jsonValue)) }
        if entity.isTrustAnchor {
            if !entity.trustMarkIssuers.isEmpty {
                claims["trust_mark_issuers"] = .object(entity.trustMarkIssuers.mapValues { JSONValue($0) })
            }
            if !entity.trustMarkOwners.isEmpty {
                var owners: [String: JSONValue] = [:]
                for (type, owner) in entity.trustMarkOwners {
                    owners[type] = ["sub": .string(owner), "jwks": try ownerKeys(owner).jsonValue]
                }
                claims["trust_mark_owners"] = .object(owners)
            }
        }
        return claims
    }

    /// Declared metadata plus the `federation_entity` endpoints this server provides for the entity.
    public func publishedMetadata(of entity: HostedEntity) -> [String: JSONValue] {
        var metadata = entity.metadata
        let endpoints = endpoints(of: entity.entityID)
        var fed = metadata["federation_entity"]?.objectValue ?? [:]
        for e in endpoints where fed[e.metadataParameter] == nil {
            fed[e.metadataParameter] = .string(entity.entityID + e.path)
        }
        if !fed.isEmpty || metadata["federation_entity"] != nil { metadata["federation_entity"] = .object(fed) }
        return metadata
    }

    /// Keys of a trust mark owner: local owners sign with their own keys; a remote owner's keys
    /// come from its entity configuration.
    func ownerKeys(_ ownerID: String) throws(FederationError) -> JWKSet {
        if entities[ownerID] != nil { return try keys.publicKeys(for: ownerID) }
        throw .serverError("trust mark owner \(ownerID) is not hosted here and has no keys configured")
    }
}
