import COpenSSL

/// A private signing key held as an EVP_PKEY. Immutable after init; every sign() uses its own
/// context, so one key may sign from many threads at once.
public final class PrivateKey: @unchecked Sendable {
    let pkey: OpaquePointer
    let kind: KeyKind
    public let publicKey: PublicKey

    /// Takes ownership of `pkey`, freeing it if the key is not one JOSE can use.
    private init(adopting pkey: OpaquePointer) throws(CryptoError) {
        do {
            self.kind = try KeyKind(pkey: pkey)
            self.publicKey = try Self.publicPart(of: pkey)
            self.pkey = pkey
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
    }

    deinit { EVP_PKEY_free(pkey) }

    /// ES256→P-256, ES384→P-384, ES512→P-521, EdDSA→Ed25519, RS256/PS256→RSA 2048.
    public convenience init(generatingFor algorithm: SignatureAlgorithm) throws(CryptoError) {
        try self.init(adopting: try KeyGeneration.generate(for: algorithm))
    }

    /// Unencrypted PKCS#8 PEM, or a traditional "EC PRIVATE KEY" / "RSA PRIVATE KEY" PEM.
    public convenience init(pem: String) throws(CryptoError) {
        try self.init(adopting: try PEMCodec.readPrivateKey(pem))
    }

    /// Unencrypted PKCS#8 ("-----BEGIN PRIVATE KEY-----").
    public func pemPKCS8() throws(CryptoError) -> String { try PEMCodec.writePrivateKey(pkey) }

    /// The JWS signature over `data`: r||s for ECDSA, raw for EdDSA, PKCS#1 v1.5 or PSS for RSA.
    public func sign(_ data: [UInt8], algorithm: SignatureAlgorithm) throws(CryptoError) -> [UInt8] {
        guard kind.fits(algorithm) else { throw .algorithmKeyMismatch }
        return try EVPSignature.sign(data, with: pkey, kind: kind, algorithm: algorithm)
    }

    /// A public-only copy, so the PublicKey never carries private material: the public
    /// parameters exported and imported again. (A SubjectPublicKeyInfo DER round trip did the
    /// same through OpenSSL 3's encoder and decoder searches, about a tenth of a cold resolve.)
    private static func publicPart(of pkey: OpaquePointer) throws(CryptoError) -> PublicKey {
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
