import JOSE
import JSON
import Support

extension EntityStatementClaims {
    /// What the signer of a statement built here vouches for, so reading its claims back need
    /// not check it again (see `EntityStatement.init(signedHere:)`).
    struct Trusted: Sendable {
        /// The `jwks` claim as the typed set it was serialized from (keys from the key provider);
        /// nil when the claim came from elsewhere (a remote subordinate's declared `jwks`), which
        /// is then read and checked like any other.
        var jwks: JWKSet?
        /// Entity identifiers that passed the URL check in an earlier statement.
        var identifiers: CheckedIdentifiers?
    }
}

/// Strings that passed the Entity Identifier check (section 1.2: an http(s) URL with a host and
/// no user information, query or fragment), so the statements this host signs check each
/// identifier once rather than in every statement naming it: a cold resolve names the same
/// leaf, intermediate and fetch endpoint in several statements, and the URL check is a
/// noticeable share of signing one. Bounded like the policy cache: past `capacity` it starts
/// over.
final class CheckedIdentifiers: Sendable {
    private let strings = Locked<Set<String>>([])
    private let capacity: Int

    init(capacity: Int = 4096) { self.capacity = max(1, capacity) }

    func contains(_ s: String) -> Bool { strings.read { $0.contains(s) } }

    func insert(_ s: String) {
        strings.withLock { set in
            if set.count >= capacity { set.removeAll(keepingCapacity: true) }
            set.insert(s)
        }
    }

    var count: Int { strings.read(\.count) }
}

/// An entity statement this host has just signed, with the claims it signed, for the
/// signed-statement cache to keep (and to build the parsed statement from when asked).
struct SignedStatementDraft: Sendable {
    let compact: String
    let keyID: String
    let claims: [String: JSONValue]
    /// The typed keys the `jwks` claim was serialized from, when they came from the key provider.
    let jwks: JWKSet?
    /// Until when the cache serves it (seconds since 1970).
    let refreshAt: Int64
}

extension FederationHost {
    /// Signs `claims` as an `entity-statement+jwt` with `key`. `jwks`: the typed set
    /// `claims["jwks"]` was serialized from, if it came from the key provider.
    func signStatement(_ claims: [String: JSONValue], with key: SigningKey, jwks: JWKSet?, refreshAt: Int64) throws(FederationError) -> SignedStatementDraft {
        let compact = try key.sign(claims, type: FederationType.entityStatement)
        return SignedStatementDraft(compact: compact, keyID: key.kid, claims: claims, jwks: jwks, refreshAt: refreshAt)
    }

    /// The parsed form of a statement signed here, or nil when its claims fail a section 3.2
    /// check (then users decode the JWT and get the error, as they would from any other host).
    func parsedStatement(_ draft: SignedStatementDraft) -> EntityStatement? {
        try? EntityStatement(signedHere: draft.compact, keyID: draft.keyID, claims: draft.claims,
                             trusted: EntityStatementClaims.Trusted(jwks: draft.jwks, identifiers: checkedIdentifiers))
    }
}
