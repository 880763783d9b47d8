import Cryptography

/// Named allow-lists, so each use of JWS states which algorithms it accepts.
public enum AlgorithmPolicy {
    /// Every asymmetric algorithm Trustbed implements; OpenID Federation requires ES256 and
    /// lets parties agree on others.
    public static let federationDefault: Set<SignatureAlgorithm> = [.ES256, .ES384, .ES512, .EdDSA, .RS256, .PS256]
}
