import Cryptography
import JOSE
import JSON

/// The key an entity signs with now.
public struct SigningKey: Sendable {
    public let privateKey: PrivateKey
    public let algorithm: SignatureAlgorithm
    public let kid: String
    /// The public JWK (with `kid`, `alg` and `use`), when whoever loaded the key already built it:
    /// exporting the public numbers again costs more than the rest of a key load.
    public let publicJWK: JWK?

    public init(privateKey: PrivateKey, algorithm: SignatureAlgorithm, kid: String, publicJWK: JWK? = nil) {
        self.privateKey = privateKey
        self.algorithm = algorithm
        self.kid = kid
        self.publicJWK = publicJWK
    }

    /// Signs a JWT of the given `typ` with this key.
    public func sign(_ claims: [String: JSONValue], type: String) throws(FederationError) -> String {
        do {
            return try JWS.sign(payload: claims, key: privateKey, algorithm: algorithm, keyID: kid, type: type)
        } catch {
            throw .serverError("signing failed: \(error)")
        }
    }
}

/// Where the federation gets its keys; the assembly layer keeps them in `Keys/` and the database.
public protocol KeyProvider: Sendable {
    func signingKey(for entityID: String) throws(FederationError) -> SigningKey
    /// The keys published in the entity's `jwks` (the active key and any still-valid predecessor).
    func publicKeys(for entityID: String) throws(FederationError) -> JWKSet
    /// Retired and revoked keys, each with `exp` (and `iat`, `revoked` where known).
    func historicalKeys(for entityID: String) throws(FederationError) -> [JWK]
}
