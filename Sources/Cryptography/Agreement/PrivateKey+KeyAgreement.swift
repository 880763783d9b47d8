import COpenSSL

extension PrivateKey {
    /// A fresh key pair on `curve` ("P-256", "P-384", "P-521") for ECDH, e.g. a JWE ephemeral
    /// key (RFC 7518 §4.6: a new `epk` for every message).
    public convenience init(generatingECCurve curve: String) throws(CryptoError) {
        guard let parsed = EllipticCurve(joseName: curve) else { throw .invalidKey("unsupported curve \(curve)") }
        let algorithm: SignatureAlgorithm
        switch parsed {
        case .p256: algorithm = .ES256
        case .p384: algorithm = .ES384
        case .p521: algorithm = .ES512
        }
        try self.init(generatingFor: algorithm)
    }

    /// The curve name ("P-256", ...) of an EC key, nil for other key types.
    public var ecCurve: String? {
        if case .ec(let curve) = kind { return curve.joseName }
        return nil
    }

    /// The raw ECDH shared secret Z (the x coordinate, SEC 1 §3.3.1) with `peer`, as RFC 7518
    /// §4.6.2 and RFC 9180 §4.1 feed into their KDFs. Both keys must be EC on the same curve.
    ///
    /// The peer point is not validated again here: every `PublicKey` got its point through
    /// OpenSSL's point decoding, which refuses a point off the curve (the JWK/COSE import,
    /// `KeyComponentsImport.ecPublicKey`, decodes it with EC_POINT_oct2point; DER and
    /// certificates likewise; PEM adds EVP_PKEY_public_check_quick), and OpenSSL's ECDH refuses
    /// a shared point at infinity. That is the ECC partial public-key validation of NIST SP 800-56A
    /// Rev. 3 §5.6.2.3.4, which for the prime-order curves used here (P-256, P-384, P-521:
    /// cofactor 1) is as strong as the full validation of §5.6.2.3.3, whose extra step
    /// n·Q = O only matters for a cofactor above 1. OpenSSL's own peer check
    /// (`EVP_PKEY_derive_set_peer_ex` with validate_peer = 1) is that full one: a second scalar
    /// multiplication, as costly as the ECDH itself, on every JWE a verifier decrypts
    /// (measured: see docs/performance.md, issue 22). Every `PublicKey` is a provider key, so
    /// OpenSSL takes the peer as it is (no export, no group built again).
    public func sharedSecret(with peer: PublicKey) throws(CipherError) -> [UInt8] {
        guard case .ec(let ours) = kind else { throw .keyAgreementFailed("private key is not an EC key") }
        guard case .ec(let theirs) = peer.kind else { throw .keyAgreementFailed("peer key is not an EC key") }
        guard ours == theirs else { throw .keyAgreementFailed("keys are on different curves") }
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { throw .internalFailure("EVP_PKEY_CTX_new") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_derive_init(ctx) == 1 else { OpenSSLErrors.clear(); throw .internalFailure("derive init") }
        guard EVP_PKEY_derive_set_peer_ex(ctx, peer.pkey, 0) == 1 else {
            OpenSSLErrors.clear(); throw .keyAgreementFailed("peer key rejected")
        }
        var length = 0
        guard EVP_PKEY_derive(ctx, nil, &length) == 1, length > 0 else {
            OpenSSLErrors.clear(); throw .keyAgreementFailed("derive failed")
        }
        var secret = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_derive(ctx, &secret, &length) == 1 else {
            OpenSSLErrors.clear(); throw .keyAgreementFailed("derive failed")
        }
        return Array(secret.prefix(length))
    }
}
