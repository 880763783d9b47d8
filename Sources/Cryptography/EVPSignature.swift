import COpenSSL

/// One-shot EVP_DigestSign / EVP_DigestVerify, with the per-algorithm padding and the
/// JWS signature encoding applied. Each call owns its own EVP_MD_CTX, so a key can be used
/// from many threads at once.
enum EVPSignature {
    static func sign(_ data: [UInt8], with pkey: OpaquePointer, kind: KeyKind, algorithm: SignatureAlgorithm) throws(CryptoError) -> [UInt8] {
        guard let ctx = EVP_MD_CTX_new() else { throw .signingFailed }
        defer { EVP_MD_CTX_free(ctx) }
        var pctx: OpaquePointer?
        guard EVP_DigestSignInit_ex(ctx, &pctx, algorithm.digestName, nil, nil, pkey, nil) == 1,
              configurePadding(pctx, algorithm)
        else { OpenSSLErrors.clear(); throw .signingFailed }
        var length = 0
        guard EVP_DigestSign(ctx, nil, &length, data, data.count) == 1 else { OpenSSLErrors.clear(); throw .signingFailed }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(ctx, &signature, &length, data, data.count) == 1 else {
            OpenSSLErrors.clear(); throw .signingFailed
        }
        signature.removeSubrange(length...)
        if case .ec(let curve) = kind {
            guard let raw = ECDSASignatureEncoding.raw(fromDER: signature, coordinateSize: curve.coordinateSize)
            else { throw .signingFailed }
            return raw
        }
        return signature
    }

    static func verify(_ signature: [UInt8], data: [UInt8], with pkey: OpaquePointer, kind: KeyKind, algorithm: SignatureAlgorithm) -> Bool {
        var encoded = signature
        switch kind {
        case .ec(let curve):
            guard let der = ECDSASignatureEncoding.der(fromRaw: signature, coordinateSize: curve.coordinateSize)
            else { return false }
            encoded = der
        case .ed25519:
            guard signature.count == 64 else { return false }
        case .rsa:
            // RFC 8017 §8.2.2 step 1: the signature is exactly as long as the modulus.
            guard signature.count == Int(EVP_PKEY_get_size(pkey)) else { return false }
        }
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        var pctx: OpaquePointer?
        guard EVP_DigestVerifyInit_ex(ctx, &pctx, algorithm.digestName, nil, nil, pkey, nil) == 1,
              configurePadding(pctx, algorithm)
        else { OpenSSLErrors.clear(); return false }
        let result = EVP_DigestVerify(ctx, encoded, encoded.count, data, data.count)
        if result != 1 { OpenSSLErrors.clear() }
        return result == 1
    }

    /// RS256 is PKCS#1 v1.5; PS256 is PSS with MGF1-SHA256 and a salt as long as the hash
    /// (RFC 7518 §3.5), enforced on verify too rather than auto-detected.
    private static func configurePadding(_ pctx: OpaquePointer?, _ algorithm: SignatureAlgorithm) -> Bool {
        switch algorithm {
        case .RS256:
            return EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) == 1
        case .PS256:
            return EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) == 1
                && EVP_PKEY_CTX_set_rsa_mgf1_md_name(pctx, "SHA256", nil) == 1
                && EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) == 1
        default:
            return true
        }
    }
}
