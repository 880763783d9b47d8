import COpenSSL

/// One-shot EVP_DigestSign / EVP_DigestVerify, with the per-algorithm padding and the
/// JWS signature encoding applied; ECDSA verification hashes first and uses EVP_PKEY_verify
/// (`verifyECDSA`). Each call owns its own contexts, so a key can be used from many threads at once.
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
        switch kind {
        case .ec(let curve):
            return verifyECDSA(signature, data: data, with: pkey, curve: curve)
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
        let result = EVP_DigestVerify(ctx, signature, signature.count, data, data.count)
        if result != 1 { OpenSSLErrors.clear() }
        return result == 1
    }

    /// ECDSA (RFC 7518 §3.4, and COSE's same r || s): the digest with the curve's once-fetched
    /// EVP_MD (`Digest.md(for:)`, the hash JOSE pairs with the curve), then EVP_PKEY_verify on
    /// it. This is what EVP_DigestVerify does, without fetching the digest by name on each call
    /// and without its digest context (measured: see docs/performance.md, "Cryptography"); the
    /// provider's ECDSA then decodes the DER and requires r and s in [1, n-1], so the verdicts
    /// are EVP_DigestVerify's (`ECDSAVerificationTests` compares them). r || s must be exactly
    /// twice the coordinate size: a DER or shortened signature is invalid.
    private static func verifyECDSA(_ signature: [UInt8], data: [UInt8], with pkey: OpaquePointer, curve: EllipticCurve) -> Bool {
        guard let der = ECDSASignatureEncoding.der(fromRaw: signature, coordinateSize: curve.coordinateSize) else { return false }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(EVP_MAX_MD_SIZE)) { hash -> Bool in
            var hashLength: UInt32 = 0
            guard EVP_Digest(data, data.count, hash.baseAddress, &hashLength, Digest.md(for: curve), nil) == 1 else {
                OpenSSLErrors.clear(); return false
            }
            guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { OpenSSLErrors.clear(); return false }
            defer { EVP_PKEY_CTX_free(ctx) }
            // No EVP_PKEY_CTX_set_signature_md: it fetches the digest again only to check the
            // hash's length, which EVP_Digest of that digest has just fixed (as in `ECDSASigner`).
            let result = EVP_PKEY_verify_init(ctx) == 1 ? EVP_PKEY_verify(ctx, der, der.count, hash.baseAddress, Int(hashLength)) : 0
            if result != 1 { OpenSSLErrors.clear() }
            return result == 1
        }
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
