import JSON
import Store
import Support

/// Where authorization codes are kept: single use, short-lived.
public protocol AuthorizationCodeStore: Sendable {
    func insert(_ code: CodeRecord) throws(StoreError)
    /// Marks the code used and returns it; of N concurrent redemptions exactly one succeeds.
    func redeem(issuer: String, code: String, now: Int64) throws(StoreError) -> CodeRedemption
}

/// The database's `issuance_codes` table.
extension CodeRepository: AuthorizationCodeStore {}

/// Authorization codes of one authorization server (RFC 6749 §4.1.2, §4.1.3). What a code
/// authorizes (`grant`) is JSON the service writes and reads back at the token endpoint.
public struct AuthorizationCodes: Sendable {
    public let issuer: String
    /// Seconds a code is valid (RFC 6749 §4.1.2: short; a maximum of 10 minutes is recommended).
    public let lifetime: Int64
    public let clock: any Clock
    public let store: any AuthorizationCodeStore

    public init(issuer: String, lifetime: Int64, clock: any Clock, store: any AuthorizationCodeStore) {
        self.issuer = issuer
        self.lifetime = lifetime
        self.clock = clock
        self.store = store
    }

    /// Issues and stores a fresh code for `clientID` that carries `grant`.
    public func issue(clientID: String, grant: JSONValue) throws(OAuthError) -> String {
        let code = OAuthIdentifiers.ordered()
        let now = clock.now()
        try OAuthError.store { () throws(StoreError) in
            try store.insert(CodeRecord(code: code, issuer: issuer, clientID: clientID, grant: grant.serialized(),
                                        createdAt: now, expiresAt: now + lifetime))
        }
        return code
    }

    /// Redeems a code (RFC 6749 §4.1.3): it is burnt first, so it is single use even when the
    /// caller's later checks fail. Unknown, expired and used codes are `invalid_grant` (§5.2).
    public func redeem(_ code: String) throws(OAuthError) -> CodeRecord {
        let outcome = try OAuthError.store { () throws(StoreError) in try store.redeem(issuer: issuer, code: code, now: clock.now()) }
        switch outcome {
        case .redeemed(let record): return record
        case .unknown: throw .invalidGrant("unknown authorization code")
        case .expired: throw .invalidGrant("the authorization code has expired")
        case .alreadyUsed: throw .invalidGrant("the authorization code was already used")
        }
    }
}
