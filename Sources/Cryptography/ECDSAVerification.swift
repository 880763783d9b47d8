import COpenSSL

/// ECDSA verification of a JWS/COSE signature (r || s) with a legacy EC_KEY: the digest with the
/// curve's once-fetched EVP_MD, then ECDSA_do_verify, which is what EVP_DigestVerify runs in the
/// end for an EC key, without a provider context per call (see `KeyComponentsImport.ecPublicKey`
/// for the figures). The same signatures pass and fail: r and s must each be exactly the
/// coordinate size (RFC 7518 §3.4) and lie in [1, n-1], which ECDSA_do_verify checks.
enum ECDSAVerification {
    static func verify(_ signature: [UInt8], data: [UInt8], with ec: OpaquePointer, curve: EllipticCurve) -> Bool {
        let size = curve.coordinateSize
        guard signature.count == 2 * size else { return false }
        let md = Digest.md(for: curve)
        var hash = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var hashLength: UInt32 = 0
        guard EVP_Digest(data, data.count, &hash, &hashLength, md, nil) == 1 else { OpenSSLErrors.clear(); return false }
        let result = trustbed_legacy_ecdsa_verify(hash, Int32(hashLength), signature, Int32(size), ec)
        if result != 1 { OpenSSLErrors.clear() }
        return result == 1
    }
}
