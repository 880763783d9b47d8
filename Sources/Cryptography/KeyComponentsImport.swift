import COpenSSL

/// Builds a public-only EVP_PKEY from raw numbers (EC: on the EC_KEY fast path,
/// Legacy/ECKeyFastPath.swift; others: EVP_PKEY_fromdata) and checks it, so a point off the curve
/// or a degenerate RSA modulus never reaches a verification.
enum KeyComponentsImport {
    /// The key, and for an EC key the legacy EC_KEY inside it (`ECKeyFastPath.publicKey`).
    static func pkey(from components: PublicKeyComponents) throws(CryptoError) -> (pkey: OpaquePointer, ecKey: OpaquePointer?) {
        switch components {
        case .ec(let curveName, let x, let y):
            guard let curve = EllipticCurve(joseName: curveName) else { throw .invalidKey("unsupported curve \(curveName)") }
            // RFC 7518 §6.2.1.2: coordinates are exactly the field size, never shortened.
            guard x.count == curve.coordinateSize, y.count == curve.coordinateSize
            else { throw .invalidKey("EC coordinates must be \(curve.coordinateSize) bytes for \(curveName)") }
            // No separate EVP_PKEY_public_check_quick (it costs as much as the import itself):
            // decoding the point already refuses one off the curve, and an uncompressed point
            // cannot be the point at infinity.
            let key = try ECKeyFastPath.publicKey(curve: curve, point: [0x04] + x + y)
            return (key.pkey, key.ecKey)
        case .okp(let curveName, let x):
            guard curveName == "Ed25519" else { throw .invalidKey("unsupported curve \(curveName)") }
            guard x.count == 32 else { throw .invalidKey("Ed25519 public key must be 32 bytes") }
            return (try build(type: "ED25519", [.octets("pub", x)]), nil)
        case .rsa(let n, let e):
            let n = Array(n.drop(while: { $0 == 0 }))
            let e = Array(e.drop(while: { $0 == 0 }))
            guard !n.isEmpty, n.count * 8 <= KeyKind.maximumRSABits else { throw .invalidKey("RSA modulus size out of range") }
            // An even modulus, or an exponent that is even, 1 or huge, cannot be a real RSA key.
            // OpenSSL's full public check would also reject legacy e=3 keys, so only these cheap
            // checks are made here.
            guard n.last! & 1 == 1, let last = e.last, last & 1 == 1, e != [1], e.count <= 8
            else { throw .invalidKey("RSA n or e is invalid") }
            return (try build(type: "RSA", [.bigNumber("n", n), .bigNumber("e", e)]), nil)
        }
    }

    /// One OSSL_PARAM. Names are StaticStrings because OSSL_PARAM_BLD keeps the name pointer
    /// until OSSL_PARAM_BLD_to_param, longer than a bridged String's temporary would live.
    enum Parameter {
        case utf8(StaticString, String)
        case octets(StaticString, [UInt8])
        case bigNumber(StaticString, [UInt8])
    }

    /// EVP_PKEY_PUBLIC_KEY: the header builds it from nested macros Swift cannot import.
    static let publicKeySelection = Int32(
        OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS | OSSL_KEYMGMT_SELECT_OTHER_PARAMETERS | OSSL_KEYMGMT_SELECT_PUBLIC_KEY)

    static func build(type: String, _ parameters: [Parameter],
                              selection: Int32 = publicKeySelection) throws(CryptoError) -> OpaquePointer {
        guard let bld = OSSL_PARAM_BLD_new() else { throw .invalidKey("out of memory") }
        defer { OSSL_PARAM_BLD_free(bld) }
        // The builder also keeps value pointers until to_param, so values are copied into
        // buffers owned here and released only after the parameters are built.
        var buffers: [UnsafeMutableBufferPointer<UInt8>] = []
        var bignums: [OpaquePointer] = []
        defer {
            buffers.forEach { $0.deallocate() }
            bignums.forEach { BN_free($0) }
        }
        func owned(_ bytes: [UInt8]) -> UnsafeMutableBufferPointer<UInt8> {
            let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(bytes.count, 1))
            _ = buffer.initialize(from: bytes)
            buffers.append(buffer)
            return buffer
        }
        var pushed = true
        for parameter in parameters {
            switch parameter {
            case .utf8(let name, let value):
                let buffer = owned(Array(value.utf8) + [0])
                pushed = pushed && OSSL_PARAM_BLD_push_utf8_string(
                    bld, cString(name), UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self),
                    value.utf8.count) == 1
            case .octets(let name, let value):
                let buffer = owned(value)
                pushed = pushed && OSSL_PARAM_BLD_push_octet_string(bld, cString(name), buffer.baseAddress, value.count) == 1
            case .bigNumber(let name, let value):
                guard let bn = BN_bin2bn(value, Int32(value.count), nil) else { pushed = false; continue }
                bignums.append(bn)
                pushed = pushed && OSSL_PARAM_BLD_push_BN(bld, cString(name), bn) == 1
            }
        }
        guard pushed, let params = OSSL_PARAM_BLD_to_param(bld) else {
            OpenSSLErrors.clear(); throw .invalidKey("cannot encode \(type) key parameters")
        }
        defer { OSSL_PARAM_free(params) }
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, type, nil) else {
            OpenSSLErrors.clear(); throw .invalidKey("\(type) not available")
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_fromdata_init(ctx) == 1,
              EVP_PKEY_fromdata(ctx, &pkey, selection, params) == 1,
              let pkey
        else { OpenSSLErrors.clear(); throw .invalidKey("\(type) public key rejected") }
        return pkey
    }

    private static func cString(_ s: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
