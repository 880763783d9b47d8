import COpenSSL

extension PrivateKey {
    /// An EC private key from its JWK numbers (RFC 7518 §6.2.2: `d` with the public `x`, `y`),
    /// for keys that arrive as JWKs and for published test vectors. The pair is checked: a `d`
    /// that does not match the point is refused.
    public convenience init(ecCurve curveName: String, d: [UInt8], x: [UInt8], y: [UInt8]) throws(CryptoError) {
        guard let curve = EllipticCurve(joseName: curveName) else { throw .invalidKey("unsupported curve \(curveName)") }
        let size = curve.coordinateSize
        guard d.count == size, x.count == size, y.count == size else {
            throw .invalidKey("EC private key members must be \(size) bytes for \(curveName)")
        }
        let pkey = try KeyComponentsImport.ecKeyPair(curve: curve, scalar: d, point: [0x04] + x + y)
        defer { EVP_PKEY_free(pkey) }
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { throw .invalidKey("out of memory") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_pairwise_check(ctx) == 1 else { OpenSSLErrors.clear(); throw .invalidKey("d does not match x, y") }
        // The designated initializer is private to PrivateKey.swift; PKCS#8 PEM is the one
        // public door in, and it runs the same classification as every other key.
        try self.init(pem: try PEMCodec.writePrivateKey(pkey))
    }
}
