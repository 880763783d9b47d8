import COpenSSL
import Support

/// ECDSA signing of one key: the digest with a once-fetched EVP_MD, then EVP_PKEY_sign over it
/// with a signing context prepared once and reused.
///
/// Why not EVP_DigestSign: OpenSSL 3.0 sets up every EVP_DigestSignInit_ex from scratch (a new
/// EVP_PKEY_CTX, algorithm fetches, the provider's context) and duplicates the context again in
/// EVP_DigestSignFinal, which costs about as much again as the ECDSA itself, where a cold
/// resolve signs three times and a superior's key signs thousands of statements (measured: see
/// docs/performance.md). The signature is the same: EVP_DigestSign hashes with the same digest
/// and hands it to the same ECDSA.
///
/// An EVP_PKEY_CTX is not safe for concurrent use, so contexts are lent out one thread at a
/// time from a small pool; the key itself is only read.
final class ECDSASigner: @unchecked Sendable {
    private let pkey: OpaquePointer
    private let curve: EllipticCurve
    private let digest: OpaquePointer
    private let idle = Locked<[OpaquePointer]>([])
    /// Contexts kept for reuse; more threads than this signing at once make (and free) their own.
    private static let poolSize = 4

    /// `pkey` must outlive the signer (the owning `PrivateKey` frees both together).
    init(pkey: OpaquePointer, curve: EllipticCurve) {
        self.pkey = pkey
        self.curve = curve
        digest = Digest.md(for: curve)
    }

    deinit {
        for ctx in idle.current { EVP_PKEY_CTX_free(ctx) }
    }

    /// The JWS signature (RFC 7518 §3.4): r || s, each left-padded to the coordinate size.
    func sign(_ data: [UInt8]) throws(CryptoError) -> [UInt8] {
        var hash = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var hashLength: UInt32 = 0
        guard EVP_Digest(data, data.count, &hash, &hashLength, digest, nil) == 1, Int(hashLength) == Int(EVP_MD_get_size(digest))
        else { OpenSSLErrors.clear(); throw .signingFailed }
        guard let ctx = idle.withLock({ $0.popLast() }) ?? makeContext() else { throw .signingFailed }
        // Large enough for the DER of any supported curve (139 bytes for P-521).
        var der = [UInt8](repeating: 0, count: 160)
        var length = der.count
        let signed = EVP_PKEY_sign(ctx, &der, &length, hash, Int(hashLength)) == 1
        if !signed { OpenSSLErrors.clear() }
        // A context that failed is not lent out again.
        let kept = signed && idle.withLock { pool -> Bool in
            guard pool.count < Self.poolSize else { return false }
            pool.append(ctx)
            return true
        }
        if !kept { EVP_PKEY_CTX_free(ctx) }
        guard signed, length <= der.count else { throw .signingFailed }
        der.removeSubrange(length...)
        guard let raw = ECDSASignatureEncoding.raw(fromDER: der, coordinateSize: curve.coordinateSize) else { throw .signingFailed }
        return raw
    }

    private func makeContext() -> OpaquePointer? {
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { OpenSSLErrors.clear(); return nil }
        // No EVP_PKEY_CTX_set_signature_md: it fetches the digest again (a third of the cost of
        // a context), only to check a length `sign` has just checked itself.
        guard EVP_PKEY_sign_init(ctx) == 1 else {
            OpenSSLErrors.clear()
            EVP_PKEY_CTX_free(ctx)
            return nil
        }
        return ctx
    }
}
