import JOSE
import StatusList
import Support

/// Status List Tokens by URI, verified, kept until their `ttl` (Token Status List §13.7: a
/// relying party may cache a token that long) and never past their `exp`. Without `ttl`,
/// `defaultTimeToLive`.
public final class StatusListCache: Sendable {
    private let fetcher: any StatusListFetcher
    private let entries = Locked<[String: (token: StatusListToken, keys: JWKSet, until: Int64)]>([:])
    public static let defaultTimeToLive: Int64 = 300
    /// Bounds the cache: a verifier meets a handful of issuers' lists, not thousands.
    static let capacity = 256

    public init(fetcher: any StatusListFetcher) { self.fetcher = fetcher }

    /// The verified token at `uri` and whether it came from the cache. `keys` are the issuer's
    /// (the same keys that verified the credential: §8.3, the list is signed by its issuer).
    public func token(uri: String, keys: JWKSet, now: Int64) throws -> (token: StatusListToken, cached: Bool) {
        // Kept with the keys that verified it: another issuer naming this URI gets its own check.
        if let hit = entries.withLock({ $0[uri] }), hit.until > now, hit.keys == keys { return (hit.token, true) }
        let compact = try fetcher.statusListToken(uri: uri)
        let token = try StatusListToken.verify(compact, keys: keys, expectedSubject: uri, now: now)
        var until = now + min(token.timeToLive ?? Self.defaultTimeToLive, 86_400)
        if let exp = token.expiresAt { until = min(until, exp) }
        entries.withLock { cache in
            if cache.count >= Self.capacity { cache = cache.filter { $0.value.until > now } }
            if cache.count < Self.capacity { cache[uri] = (token, keys, until) }
        }
        return (token, false)
    }
}
