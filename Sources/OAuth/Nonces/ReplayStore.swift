import Store

/// Where an authorization server records what may be used once: a DPoP proof's or an
/// attestation PoP's `jti` (RFC 9449 §11.1), a stateless nonce when it is spent. `record`
/// is true for exactly one caller per (`issuer`, `purpose`, `jti`), however many race; the
/// record lives at least until `expiresAt`, so a replay inside the acceptance window is caught.
public protocol ReplayStore: Sendable {
    func recordJTI(issuer: String, purpose: String, jti: String, expiresAt: Int64) throws(StoreError) -> Bool
}

/// The database's `jti` table (one INSERT OR IGNORE under the database lock).
extension NonceRepository: ReplayStore {}

/// One issuer's replay records for one purpose (`"dpop"`, `"client-attestation-pop"`, ...),
/// so two uses of the same value never collide.
public struct ReplayRecords: Sendable {
    public let issuer: String
    public let purpose: String
    public let store: any ReplayStore

    public init(issuer: String, purpose: String, store: any ReplayStore) {
        self.issuer = issuer
        self.purpose = purpose
        self.store = store
    }

    /// True the first time `jti` is seen (then recorded until `expiresAt`), false for a replay.
    public func firstUse(_ jti: String, expiresAt: Int64) throws(OAuthError) -> Bool {
        try OAuthError.store { () throws(StoreError) in
            try store.recordJTI(issuer: issuer, purpose: purpose, jti: jti, expiresAt: expiresAt)
        }
    }
}
