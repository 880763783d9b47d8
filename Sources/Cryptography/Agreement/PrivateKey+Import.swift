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
        let pkey = try Self.fromData(curve: curve, d: d, point: [0x04] + x + y)
        defer { EVP_PKEY_free(pkey) }
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { throw .invalidKey("out of memory") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_pairwise_check(ctx) == 1 else { OpenSSLErrors.clear(); throw .invalidKey("d does not match x, y") }
        // The designated initializer is private to PrivateKey.swift; PKCS#8 PEM is the one
        // public door in, and it runs the same classification as every other key.
        try self.init(pem: try PEMCodec.writePrivateKey(pkey))
    }

    /// OSSL_PARAM_BLD keeps the name and value pointers until OSSL_PARAM_BLD_to_param, so the
    /// whole build runs inside the closures that keep the buffers alive; names are StaticStrings.
    private static func fromData(curve: EllipticCurve, d: [UInt8], point: [UInt8]) throws(CryptoError) -> OpaquePointer {
        guard let bld = OSSL_PARAM_BLD_new() else { throw .invalidKey("out of memory") }
        defer { OSSL_PARAM_BLD_free(bld) }
        guard let bn = BN_secure_new() else { throw .invalidKey("out of memory") }
        defer { BN_clear_free(bn) }
        guard BN_bin2bn(d, Int32(d.count), bn) != nil else { OpenSSLErrors.clear(); throw .invalidKey("bad d") }
        let group = Array(curve.joseName.utf8CString)
        let params: UnsafeMutablePointer<OSSL_PARAM>? = group.withUnsafeBufferPointer { groupBuffer in
            point.withUnsafeBufferPointer { pointBuffer -> UnsafeMutablePointer<OSSL_PARAM>? in
                guard OSSL_PARAM_BLD_push_utf8_string(bld, name("group"), groupBuffer.baseAddress, 0) == 1,
                      OSSL_PARAM_BLD_push_octet_string(bld, name("pub"), pointBuffer.baseAddress, pointBuffer.count) == 1,
                      OSSL_PARAM_BLD_push_BN(bld, name("priv"), bn) == 1
                else { return nil }
                return OSSL_PARAM_BLD_to_param(bld)
            }
        }
        guard let params else { OpenSSLErrors.clear(); throw .invalidKey("cannot encode EC key parameters") }
        defer { OSSL_PARAM_free(params) }
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { OpenSSLErrors.clear(); throw .invalidKey("EC not available") }
        defer { EVP_PKEY_CTX_free(ctx) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_fromdata_init(ctx) == 1,
              EVP_PKEY_fromdata(ctx, &pkey, Self.keyPairSelection, params) == 1,
              let pkey
        else { OpenSSLErrors.clear(); throw .invalidKey("EC private key rejected") }
        return pkey
    }

    /// EVP_PKEY_KEYPAIR, which the header builds from nested macros Swift cannot import.
    private static let keyPairSelection = Int32(
        OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS | OSSL_KEYMGMT_SELECT_OTHER_PARAMETERS
            | OSSL_KEYMGMT_SELECT_PUBLIC_KEY | OSSL_KEYMGMT_SELECT_PRIVATE_KEY)

    private static func name(_ s: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
