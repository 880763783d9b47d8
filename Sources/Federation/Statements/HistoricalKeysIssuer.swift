import JOSE
import JSON

extension FederationHost {
    /// The signed `jwk-set+jwt` of the federation historical keys endpoint (section 8.7): the
    /// entity's retired and revoked keys, each with the `kid`, `exp`, `iat` and `revoked` members
    /// the key provider keeps. Cached like the other statements; a rotation or revocation
    /// replaces the host and with it this cache.
    public func historicalKeys(of entityID: String) throws(FederationError) -> String {
        try signedHistoricalKeys(of: entityID).compact
    }

    func signedHistoricalKeys(of entityID: String) throws(FederationError) -> SignedJWT {
        let now = now()
        return try cache.value(for: .historicalKeys(entityID), now: now, type: FederationType.jwkSet) { () throws(FederationError) -> (String, Int64) in
            guard let entity = entities[entityID] else { throw .notFound("no entity \(entityID) here") }
            let retired = try keys.historicalKeys(for: entityID)
            let claims: [String: JSONValue] = [
                "iss": .string(entityID),
                "iat": .int(now),
                "keys": .array(retired.map { .object($0.json) }),
            ]
            let jwt = try keys.signingKey(for: entityID).sign(claims, type: FederationType.jwkSet)
            return (jwt, SignedStatementCache.refreshTime(iat: now, exp: now + entity.lifetime))
        }
    }
}
