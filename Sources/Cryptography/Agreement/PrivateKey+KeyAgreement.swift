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
    /// §4.6.2 and RFC 9180 §4.1 feed into their KDFs. Both keys must be EC on the same curve;
    /// OpenSSL validates the peer point before deriving.
    public func sharedSecret(with peer: PublicKey) throws(CipherError) -> [UInt8] {
        guard case .ec(let ours) = kind else { throw .keyAgreementFailed("private key is not an EC key") }
        guard case .ec(let theirs) = peer.kind else { throw .keyAgreementFailed("peer key is not an EC key") }
        guard ours == theirs else { throw .keyAgreementFailed("keys are on different curves") }
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { throw .internalFailure("EVP_PKEY_CTX_new") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_derive_init(ctx) == 1 else { OpenSSLErrors.clear(); throw .internalFailure("derive init") }
        guard EVP_PKEY_derive_set_peer_ex(ctx, peer.pkey, 1) == 1 else {
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
