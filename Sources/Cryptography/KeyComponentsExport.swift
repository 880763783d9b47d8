import COpenSSL

/// Reads the public numbers out of an EVP_PKEY through the provider parameter API.
enum KeyComponentsExport {
    static func components(of pkey: OpaquePointer, kind: KeyKind) throws(CryptoError) -> PublicKeyComponents {
        switch kind {
        case .ec(let curve):
            if let point = uncompressedPoint(pkey, coordinateSize: curve.coordinateSize) { return .ec(curve: curve.joseName, x: point.x, y: point.y) }
            guard let x = bigNumber(pkey, OSSL_PKEY_PARAM_EC_PUB_X, paddedTo: curve.coordinateSize),
                  let y = bigNumber(pkey, OSSL_PKEY_PARAM_EC_PUB_Y, paddedTo: curve.coordinateSize)
            else { throw .invalidKey("cannot read EC public point") }
            return .ec(curve: curve.joseName, x: x, y: y)
        case .ed25519:
            var x = [UInt8](repeating: 0, count: 32)
            var length = 0
            guard EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_PUB_KEY, &x, x.count, &length) == 1,
                  length == 32
            else { OpenSSLErrors.clear(); throw .invalidKey("cannot read Ed25519 public key") }
            return .okp(curve: "Ed25519", x: x)
        case .rsa:
            guard let n = bigNumber(pkey, OSSL_PKEY_PARAM_RSA_N, paddedTo: nil),
                  let e = bigNumber(pkey, OSSL_PKEY_PARAM_RSA_E, paddedTo: nil)
            else { throw .invalidKey("cannot read RSA public key") }
            return .rsa(n: n, e: e)
        }
    }

    /// x and y from the encoded public point (0x04 || x || y) in one call: each of the
    /// `EC_PUB_X`/`EC_PUB_Y` parameters converts the point to affine coordinates on its own
    /// (a field inversion each). Nil for a key kept in compressed form.
    private static func uncompressedPoint(_ pkey: OpaquePointer, coordinateSize size: Int) -> (x: [UInt8], y: [UInt8])? {
        var encoded = [UInt8](repeating: 0, count: 1 + 2 * size)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_PUB_KEY, &encoded, encoded.count, &length) == 1 else {
            OpenSSLErrors.clear(); return nil
        }
        guard length == encoded.count, encoded[0] == 0x04 else { return nil }
        return (Array(encoded[1 ... size]), Array(encoded[(1 + size)...]))
    }

    /// Big-endian bytes, left-padded to `width` when given, minimal otherwise.
    private static func bigNumber(_ pkey: OpaquePointer, _ name: String, paddedTo width: Int?) -> [UInt8]? {
        var bn: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pkey, name, &bn) == 1, let bn else { OpenSSLErrors.clear(); return nil }
        defer { BN_free(bn) }
        let minimal = Int((BN_num_bits(bn) + 7) / 8)
        let count = width ?? max(minimal, 1)
        guard minimal <= count else { return nil }
        var out = [UInt8](repeating: 0, count: count)
        guard BN_bn2binpad(bn, &out, Int32(count)) == Int32(count) else { return nil }
        return out
    }
}
