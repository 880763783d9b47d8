import Store

extension PIDProvider {
    /// Deletes what can never be used again: expired offers, request URIs, codes, tokens,
    /// nonces, `jti`s and delivered or expired deferred transactions. Issued-credential records
    /// and status lists stay (they are the issuer's memory of what it issued). Returns the
    /// number of rows deleted. The composition root calls it periodically; every lookup already
    /// ignores expired rows, so this only bounds the database.
    @discardableResult
    public func purgeExpired() throws(StoreError) -> Int { try purgeExpired(now: clock.now()) }

    /// `purgeExpired()` as of `now` (seconds since 1970). The tables are shared by every PID
    /// Provider of the server, so one call purges for all of them.
    @discardableResult
    public func purgeExpired(now: Int64) throws(StoreError) -> Int {
        try OfferRepository(database: database).purge(expiredBefore: now)
            + AuthorizationRequestRepository(database: database).purge(expiredBefore: now)
            + CodeRepository(database: database).purge(expiredBefore: now)
            + TokenRepository(database: database).purge(expiredBefore: now)
            + NonceRepository(database: database).purge(now: now)
            + TransactionRepository(database: database).purge(now: now)
    }
}
