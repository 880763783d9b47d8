import COpenSSL

/// Fresh key pairs through EVP_PKEY_generate, one key type per signature algorithm.
enum KeyGeneration {
    /// RSA is only generated for tests and interop; 2048 bits is the RFC 7518 minimum.
    static let rsaBits: Int32 = 2048

    static func generate(for algorithm: SignatureAlgorithm) throws(CryptoError) -> OpaquePointer {
        let typeName: String
        switch algorithm {
        case .ES256, .ES384, .ES512: typeName = "EC"
        case .EdDSA: typeName = "ED25519"
        case .RS256, .PS256: typeName = "RSA"
        }
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, typeName, nil) else {
            OpenSSLErrors.clear(); throw .keyGenerationFailed
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_keygen_init(ctx) == 1 else { OpenSSLErrors.clear(); throw .keyGenerationFailed }
        if let curve = algorithm.ellipticCurve {
            guard EVP_PKEY_CTX_set_group_name(ctx, curve.joseName) == 1 else {
                OpenSSLErrors.clear(); throw .keyGenerationFailed
            }
        }
        if typeName == "RSA" {
            guard EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, rsaBits) == 1 else {
                OpenSSLErrors.clear(); throw .keyGenerationFailed
            }
        }
        var pkey: OpaquePointer?
        guard EVP_PKEY_generate(ctx, &pkey) == 1, let pkey else { OpenSSLErrors.clear(); throw .keyGenerationFailed }
        return pkey
    }
}
