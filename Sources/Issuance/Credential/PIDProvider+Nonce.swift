import Store

extension PIDProvider {
    static let cNoncePurpose = "c_nonce"

    /// A fresh `c_nonce` (OpenID4VCI 1.0 §7.2): 32 random bytes, stored until
    /// `configuration.nonceLifetime` has passed. Each is good for one credential request: the
    /// first request whose proofs carry it consumes it (§13.4, proof replay).
    public func issueCNonce() throws(IssuanceError) -> String {
        let nonce = Self.randomToken()
        try withCredentialStore { () throws(StoreError) in
            try NonceRepository(database: database).insert(
                issuer: issuer, nonce: nonce, purpose: Self.cNoncePurpose, expiresAt: clock.now() + configuration.nonceLifetime)
        }
        return nonce
    }

    /// Consumes a `c_nonce`: true for exactly one caller, while it is unexpired. One
    /// conditional UPDATE decides, so 50 concurrent requests with the same nonce get one `true`.
    public func consumeCNonce(_ nonce: String) throws(IssuanceError) -> Bool {
        try withCredentialStore { () throws(StoreError) in
            try NonceRepository(database: database).consume(issuer: issuer, nonce: nonce, purpose: Self.cNoncePurpose,
                                                            now: clock.now())
        }
    }
}
