import COpenSSL

/// Builds EVP_PKEYs from raw numbers and checks them, so a point off the curve or a degenerate
/// RSA modulus never reaches a verification: public keys from their components (every JWK and
/// COSE key), and EC key pairs from their parts (`PKCS8ECKey`).
///
/// EC keys start from a per-curve provider key whose group is built once per process
/// (`CurveTemplate`): OpenSSL 3.0 builds the curve group again from its name for every
/// EVP_PKEY_fromdata or decoder, and a copy of the template made by EVP_PKEY_dup copies the
/// group instead (measured: see docs/performance.md, "Cryptography"). Every call used here is a
/// public, non-deprecated OpenSSL 3.0 API.
enum KeyComponentsImport {
    static func pkey(from components: PublicKeyComponents) throws(CryptoError) -> OpaquePointer {
        switch components {
        case .ec(let curveName, let x, let y):
            guard let curve = EllipticCurve(joseName: curveName) else { throw .invalidKey("unsupported curve \(curveName)") }
            // RFC 7518 §6.2.1.2: coordinates are exactly the field size, never shortened.
            guard x.count == curve.coordinateSize, y.count == curve.coordinateSize
            else { throw .invalidKey("EC coordinates must be \(curve.coordinateSize) bytes for \(curveName)") }
            return try ecPublicKey(curve: curve, point: [0x04] + x + y)
        case .okp(let curveName, let x):
            guard curveName == "Ed25519" else { throw .invalidKey("unsupported curve \(curveName)") }
            guard x.count == 32 else { throw .invalidKey("Ed25519 public key must be 32 bytes") }
            return try build(type: "ED25519", [.octets("pub", x)])
        case .rsa(let n, let e):
            let n = Array(n.drop(while: { $0 == 0 }))
            let e = Array(e.drop(while: { $0 == 0 }))
            guard !n.isEmpty, n.count * 8 <= KeyKind.maximumRSABits else { throw .invalidKey("RSA modulus size out of range") }
            // An even modulus, or an exponent that is even, 1 or huge, cannot be a real RSA key.
            // OpenSSL's full public check would also reject legacy e=3 keys, so only these cheap
            // checks are made here.
            guard n.last! & 1 == 1, let last = e.last, last & 1 == 1, e != [1], e.count <= 8
            else { throw .invalidKey("RSA n or e is invalid") }
            return try build(type: "RSA", [.bigNumber("n", n), .bigNumber("e", e)])
        }
    }

    /// THE way to make an EC public key from its point: a new provider key (owned by the caller)
    /// on `curve`, a copy of the curve's template given `point` (SEC 1 uncompressed) with
    /// EVP_PKEY_set1_encoded_public_key. OpenSSL decodes the point with EC_POINT_oct2point,
    /// which refuses one off the curve; an uncompressed point cannot be the point at infinity.
    /// No separate EVP_PKEY_public_check_quick (it costs as much as the import itself).
    static func ecPublicKey(curve: EllipticCurve, point: [UInt8]) throws(CryptoError) -> OpaquePointer {
        let template = try CurveTemplate.of(curve)
        guard let key = EVP_PKEY_dup(template.key) else { OpenSSLErrors.clear(); throw .invalidKey("out of memory") }
        guard EVP_PKEY_set1_encoded_public_key(key, point, point.count) == 1 else {
            OpenSSLErrors.clear(); EVP_PKEY_free(key); throw .invalidKey("EC public key rejected")
        }
        return key
    }

    /// An EC key pair (owned by the caller) from its private scalar and its public point
    /// (SEC 1 uncompressed), with EVP_PKEY_fromdata. OpenSSL 3.0 has no non-deprecated way to
    /// give a copied key a private scalar (EVP_PKEY_set_bn_param of "priv" on a copy of the
    /// template returns 1 and leaves the key without it), so the group is built again here (a
    /// reused EC decoder context costs the same); but the context comes from the curve's
    /// template (no key-management fetch by name), and the point is taken as given, not
    /// recomputed from the scalar, as OpenSSL's decoder takes it from the DER. The point is
    /// decoded with the on-curve check of `ecPublicKey`.
    static func ecKeyPair(curve: EllipticCurve, scalar: [UInt8], point: [UInt8]) throws(CryptoError) -> OpaquePointer {
        try build(type: "EC", [.utf8("group", curve.joseName), .secretBigNumber("priv", scalar), .octets("pub", point)],
                  selection: keyPairSelection, template: try CurveTemplate.of(curve).key)
    }

    /// A provider EC key with no point, per curve; its group is built once. Never modified
    /// after it is made (only duplicated, or lent as the key of a fromdata context), so
    /// threads share it.
    private final class CurveTemplate: @unchecked Sendable {
        let key: OpaquePointer

        private init(_ curve: EllipticCurve) throws(CryptoError) {
            key = try KeyComponentsImport.build(type: "EC", [.utf8("group", curve.joseName)],
                                                selection: Int32(OSSL_KEYMGMT_SELECT_ALL_PARAMETERS))
        }

        deinit { EVP_PKEY_free(key) }

        private static let templates: [EllipticCurve: Result<CurveTemplate, CryptoError>] = Dictionary(
            uniqueKeysWithValues: EllipticCurve.allCases.map { curve in
                (curve, Result { () throws(CryptoError) in try CurveTemplate(curve) })
            })

        static func of(_ curve: EllipticCurve) throws(CryptoError) -> CurveTemplate {
            guard let template = try templates[curve]?.get() else { throw .invalidKey("unsupported curve \(curve.joseName)") }
            return template
        }
    }

    /// One OSSL_PARAM. Names are StaticStrings because OSSL_PARAM_BLD keeps the name pointer
    /// until OSSL_PARAM_BLD_to_param, longer than a bridged String's temporary would live.
    enum Parameter {
        case utf8(StaticString, String)
        case octets(StaticString, [UInt8])
        case bigNumber(StaticString, [UInt8])
        /// A private number: held in OpenSSL's secure heap and cleared when freed.
        case secretBigNumber(StaticString, [UInt8])
    }

    /// EVP_PKEY_PUBLIC_KEY: the header builds it from nested macros Swift cannot import.
    static let publicKeySelection = Int32(
        OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS | OSSL_KEYMGMT_SELECT_OTHER_PARAMETERS | OSSL_KEYMGMT_SELECT_PUBLIC_KEY)

    /// EVP_PKEY_KEYPAIR, for the same reason.
    static let keyPairSelection = publicKeySelection | Int32(OSSL_KEYMGMT_SELECT_PRIVATE_KEY)

    /// The key EVP_PKEY_fromdata makes of `parameters`, with a context from `template`'s key
    /// management when given (no fetch by name), else from `type`'s.
    static func build(type: String, _ parameters: [Parameter], selection: Int32 = publicKeySelection,
                      template: OpaquePointer? = nil) throws(CryptoError) -> OpaquePointer {
        guard let bld = OSSL_PARAM_BLD_new() else { throw .invalidKey("out of memory") }
        defer { OSSL_PARAM_BLD_free(bld) }
        // The builder also keeps value pointers until to_param, so values are copied into
        // buffers owned here and released only after the parameters are built.
        var buffers: [UnsafeMutableBufferPointer<UInt8>] = []
        var bignums: [OpaquePointer] = []
        defer {
            buffers.forEach { $0.deallocate() }
            bignums.forEach { BN_clear_free($0) }
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
            case .bigNumber(let name, let value), .secretBigNumber(let name, let value):
                var secret = false
                if case .secretBigNumber = parameter { secret = true }
                // A secure BIGNUM makes OSSL_PARAM_BLD_to_param put its copy in the secure heap,
                // which OSSL_PARAM_free clears.
                guard let bn = secret ? BN_secure_new() : BN_new() else { pushed = false; continue }
                bignums.append(bn)
                pushed = pushed && BN_bin2bn(value, Int32(value.count), bn) != nil
                    && OSSL_PARAM_BLD_push_BN(bld, cString(name), bn) == 1
            }
        }
        guard pushed, let params = OSSL_PARAM_BLD_to_param(bld) else {
            OpenSSLErrors.clear(); throw .invalidKey("cannot encode \(type) key parameters")
        }
        defer { OSSL_PARAM_free(params) }
        guard let ctx = template.map({ EVP_PKEY_CTX_new_from_pkey(nil, $0, nil) }) ?? EVP_PKEY_CTX_new_from_name(nil, type, nil) else {
            OpenSSLErrors.clear(); throw .invalidKey("\(type) not available")
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_fromdata_init(ctx) == 1,
              EVP_PKEY_fromdata(ctx, &pkey, selection, params) == 1,
              let pkey
        else { OpenSSLErrors.clear(); throw .invalidKey("\(type) key rejected") }
        return pkey
    }

    private static func cString(_ s: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
