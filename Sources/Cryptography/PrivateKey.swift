import COpenSSL
import Support

/// A private signing key held as an EVP_PKEY. Immutable after init (the public key is built once,
/// on first use, under a lock); signing contexts are lent to one thread at a time (EC keys keep
/// a few for reuse, see `ECDSASigner`), so one key may sign from many threads at once.
public final class PrivateKey: @unchecked Sendable {
    let pkey: OpaquePointer
    let kind: KeyKind
    /// The public numbers (a JWK's `x`/`y`, `n`/`e`), read from the private key itself.
    public let publicComponents: PublicKeyComponents
    private let publicPart = Locked<PublicKey?>(nil)
    /// EC keys only.
    private let ecdsa: ECDSASigner?

    /// Takes ownership of `pkey`, freeing it if the key is not one JOSE can use.
    private convenience init(adopting pkey: OpaquePointer) throws(CryptoError) {
        let kind: KeyKind
        let components: PublicKeyComponents
        do {
            kind = try KeyKind(pkey: pkey)
            components = try KeyComponentsExport.components(of: pkey, kind: kind)
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
        self.init(pkey: pkey, kind: kind, components: components)
    }

    /// Takes ownership of `pkey`, whose kind and public numbers the caller already knows.
    private init(pkey: OpaquePointer, kind: KeyKind, components: PublicKeyComponents) {
        self.pkey = pkey
        self.kind = kind
        publicComponents = components
        if case .ec(let curve) = kind { ecdsa = ECDSASigner(pkey: pkey, curve: curve) } else { ecdsa = nil }
    }

    /// A public-only key (so it never carries private material), built on first use: a
    /// federation server loads a leaf's key to sign its entity configuration and needs only
    /// its public numbers for `jwks`, so building the public EVP_PKEY on every key load would
    /// be wasted (measured: see docs/performance.md).
    public var publicKey: PublicKey {
        if let key = publicPart.read({ $0 }) { return key }
        return publicPart.withLock { part in
            if let key = part { return key }
            let key = Self.publicKey(components: publicComponents, of: pkey)
            part = key
            return key
        }
    }

    /// Whether this key's type, curve and size are right for `algorithm` (without building the public key).
    public func fits(_ algorithm: SignatureAlgorithm) -> Bool { kind.fits(algorithm) }

    deinit { EVP_PKEY_free(pkey) }

    /// ES256→P-256, ES384→P-384, ES512→P-521, EdDSA→Ed25519, RS256/PS256→RSA 2048.
    public convenience init(generatingFor algorithm: SignatureAlgorithm) throws(CryptoError) {
        try self.init(adopting: try KeyGeneration.generate(for: algorithm))
    }

    /// Unencrypted PKCS#8 PEM, or a traditional "EC PRIVATE KEY" / "RSA PRIVATE KEY" PEM.
    /// An EC key on a named curve in the form OpenSSL writes is imported straight from its
    /// parts (see `PKCS8ECKey`) with EVP_PKEY_fromdata; every other key goes through OpenSSL's
    /// decoders (which also refuse an EC key whose parts `KeyComponentsImport.ecKeyPair` refused).
    public convenience init(pem: String) throws(CryptoError) {
        if let der = PEMCodec.pkcs8DER(pem), let ec = PKCS8ECKey(der: der),
           let pkey = try? KeyComponentsImport.ecKeyPair(curve: ec.curve, scalar: ec.privateScalar, point: ec.publicPoint) {
            self.init(pkey: pkey, kind: .ec(ec.curve), components: ec.components)
            return
        }
        try self.init(adopting: try PEMCodec.readPrivateKey(pem))
    }

    /// Unencrypted PKCS#8 ("-----BEGIN PRIVATE KEY-----"). An EC key's is written from its
    /// parts (`PKCS8ECKey.pem`, the same text OpenSSL's encoder writes); any other key, or an EC
    /// key whose scalar OpenSSL does not export (none is expected), through OpenSSL's encoder.
    public func pemPKCS8() throws(CryptoError) -> String {
        if case .ec(let curve) = kind, let parts = PKCS8ECKey(curve: curve, pkey: pkey, components: publicComponents),
           let pem = try? parts.pem() {
            return pem
        }
        return try PEMCodec.writePrivateKey(pkey)
    }

    /// The JWS signature over `data`: r||s for ECDSA, raw for EdDSA, PKCS#1 v1.5 or PSS for RSA.
    public func sign(_ data: [UInt8], algorithm: SignatureAlgorithm) throws(CryptoError) -> [UInt8] {
        guard kind.fits(algorithm) else { throw .algorithmKeyMismatch }
        if let ecdsa { return try ecdsa.sign(data) }
        return try EVPSignature.sign(data, with: pkey, kind: kind, algorithm: algorithm)
    }

    /// The public key from numbers the private key gave (the import checks them again, e.g. that
    /// the point is on the curve). Should that ever fail for a key OpenSSL loaded, the public
    /// parameters are exported and imported whole instead; failing both is a broken OpenSSL.
    private static func publicKey(components: PublicKeyComponents, of pkey: OpaquePointer) -> PublicKey {
        if let key = try? PublicKey(components: components) { return key }
        do {
            return try exportedPublicPart(of: pkey)
        } catch {
            fatalError("OpenSSL cannot rebuild the public key of a private key it loaded: \(error)")
        }
    }

    private static func exportedPublicPart(of pkey: OpaquePointer) throws(CryptoError) -> PublicKey {
        var params: UnsafeMutablePointer<OSSL_PARAM>?
        guard EVP_PKEY_todata(pkey, KeyComponentsImport.publicKeySelection, &params) == 1, let params else {
            OpenSSLErrors.clear(); throw .invalidKey("cannot export public key")
        }
        defer { OSSL_PARAM_free(params) }
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { throw .invalidKey("out of memory") }
        defer { EVP_PKEY_CTX_free(ctx) }
        var pub: OpaquePointer?
        guard EVP_PKEY_fromdata_init(ctx) == 1,
              EVP_PKEY_fromdata(ctx, &pub, KeyComponentsImport.publicKeySelection, params) == 1, let pub else {
            OpenSSLErrors.clear(); throw .invalidKey("cannot import public key")
        }
        return try PublicKey(adopting: pub)
    }
}
