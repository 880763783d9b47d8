import COpenSSL
import SwiftASN1
import Support

/// The parts of an unencrypted PKCS#8 EC private key (RFC 5208 PrivateKeyInfo holding an
/// RFC 5915 ECPrivateKey on a named curve, with its public point), read from DER and made into
/// an EVP_PKEY with one EVP_PKEY_fromdata.
///
/// Why not OpenSSL's decoder: a server hosting 100,000 entities reads a leaf's PEM on most cold
/// resolves, and OSSL_DECODER (chain of decoders, PKCS#8 to EC_KEY to provider key) took 264k
/// instructions a key where the import takes 199k, 139k of it building the curve group, which
/// any way of making an OpenSSL 3.0 EC key repeats. Reading the public point from the DER also
/// saves exporting it again (57k; callgrind, P-256). The DER is read with swift-asn1, and only
/// the exact shape OpenSSL writes is taken; anything else (other versions, attributes, explicit curve
/// parameters, no public key, other key types) gives nil and takes the decoder.
///
/// The import checks what the decoder checks: the public point is decoded and must lie on the
/// curve (EC_KEY_oct2key); as with the decoder, it is not recomputed from the private scalar.
struct PKCS8ECKey {
    let curve: EllipticCurve
    /// The private scalar, big-endian, exactly `curve.coordinateSize` bytes.
    let privateScalar: [UInt8]
    /// The uncompressed public point 0x04 || x || y.
    let publicPoint: [UInt8]

    var components: PublicKeyComponents {
        let size = curve.coordinateSize
        return .ec(curve: curve.joseName, x: Array(publicPoint[1 ... size]), y: Array(publicPoint[(1 + size)...]))
    }

    /// The named-curve OBJECT IDENTIFIER of each curve (RFC 5480 §2.1.1.1).
    private static func curveOID(_ curve: EllipticCurve) -> ASN1ObjectIdentifier {
        switch curve {
        case .p256: return ASN1ObjectIdentifier.NamedCurves.secp256r1
        case .p384: return ASN1ObjectIdentifier.NamedCurves.secp384r1
        case .p521: return ASN1ObjectIdentifier.NamedCurves.secp521r1
        }
    }

    private init(curve: EllipticCurve, privateScalar: [UInt8], publicPoint: [UInt8]) {
        self.curve = curve
        self.privateScalar = privateScalar
        self.publicPoint = publicPoint
    }

    init?(der: [UInt8]) {
        guard let parsed = try? Self.parse(der) else { return nil }
        self = parsed
    }

    /// PrivateKeyInfo (RFC 5208 §5) without attributes, whose key is an ECPrivateKey (RFC 5915
    /// §3) with its public key; nil (or a swift-asn1 error) for any other shape.
    private static func parse(_ der: [UInt8]) throws -> PKCS8ECKey? {
        let algorithmAndKey: (EllipticCurve, ArraySlice<UInt8>)? = try DER.sequence(try DER.parse(der), identifier: .sequence) { info in
            guard try Int(derEncoded: &info) == 0, let algorithm = info.next() else { return nil }
            let curve = try DER.sequence(algorithm, identifier: .sequence) { fields -> EllipticCurve? in
                guard try ASN1ObjectIdentifier(derEncoded: &fields) == .AlgorithmIdentifier.idEcPublicKey else { return nil }
                let named = try ASN1ObjectIdentifier(derEncoded: &fields)
                return EllipticCurve.allCases.first { curveOID($0) == named }
            }
            let key = try ASN1OctetString(derEncoded: &info)
            return curve.map { ($0, key.bytes) }
        }
        guard let (curve, octets) = algorithmAndKey else { return nil }
        return try DER.sequence(try DER.parse(octets), identifier: .sequence) { ecKey -> PKCS8ECKey? in
            guard try Int(derEncoded: &ecKey) == 1 else { return nil }
            let scalar = try ASN1OctetString(derEncoded: &ecKey).bytes
            // [0] parameters: optional, and then the same curve as the algorithm names.
            let parameters = try DER.optionalExplicitlyTagged(&ecKey, tagNumber: 0, tagClass: .contextSpecific) { node in
                try ASN1ObjectIdentifier(derEncoded: node)
            }
            // [1] publicKey: required here (the fast path takes the point from it), an
            // uncompressed point of the curve's size with no unused bits.
            let publicKey = try DER.explicitlyTagged(&ecKey, tagNumber: 1, tagClass: .contextSpecific) { node in
                try ASN1BitString(derEncoded: node)
            }
            let size = curve.coordinateSize
            guard scalar.count == size, parameters == nil || parameters == curveOID(curve),
                  publicKey.paddingBits == 0, publicKey.bytes.count == 1 + 2 * size, publicKey.bytes.first == 0x04
            else { return nil }
            return PKCS8ECKey(curve: curve, privateScalar: Array(scalar), publicPoint: Array(publicKey.bytes))
        }
    }

    /// EVP_PKEY_KEYPAIR, built from macros Swift cannot import.
    static let keyPairSelection = Int32(OSSL_KEYMGMT_SELECT_ALL_PARAMETERS | OSSL_KEYMGMT_SELECT_PRIVATE_KEY | OSSL_KEYMGMT_SELECT_PUBLIC_KEY)

    /// The key pair as an EVP_PKEY (owned by the caller), or nil if OpenSSL refuses it.
    func makeKey() -> OpaquePointer? {
        // OSSL_PARAM integers are native-endian; the scalar is copied reversed on little-endian
        // hosts into a buffer that is wiped afterwards.
        var scalar = privateScalar
        #if _endian(little)
        scalar.reverse()
        #endif
        var point = publicPoint
        let group = curve.openSSLName
        defer { scalar.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
        return group.withCString { groupName -> OpaquePointer? in
            scalar.withUnsafeMutableBytes { scalarBytes -> OpaquePointer? in
                point.withUnsafeMutableBytes { pointBytes -> OpaquePointer? in
                    var params = [
                        OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, UnsafeMutablePointer(mutating: groupName), 0),
                        OSSL_PARAM_construct_BN(OSSL_PKEY_PARAM_PRIV_KEY, scalarBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), scalarBytes.count),
                        OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, pointBytes.baseAddress, pointBytes.count),
                        OSSL_PARAM_construct_end(),
                    ]
                    return Self.importer.withContext { ctx -> OpaquePointer? in
                        var pkey: OpaquePointer?
                        guard EVP_PKEY_fromdata(ctx, &pkey, Self.keyPairSelection, &params) == 1, let pkey else {
                            OpenSSLErrors.clear(); return nil
                        }
                        return pkey
                    }
                }
            }
        }
    }
}

extension PKCS8ECKey {
    /// EVP_PKEY_fromdata contexts for EC keys, ready for import. Making one fetches the EC key
    /// manager again (15k instructions of a 230k key load, callgrind); a context imports any
    /// number of keys, one thread at a time, so a few are kept and lent out.
    private static let importer = FromDataContexts()

    private final class FromDataContexts: @unchecked Sendable {
        private let idle = Locked<[OpaquePointer]>([])

        func withContext<T>(_ body: (OpaquePointer) -> T?) -> T? {
            guard let ctx = idle.withLock({ $0.popLast() }) ?? Self.make() else { return nil }
            defer {
                let kept = idle.withLock { pool -> Bool in
                    guard pool.count < 8 else { return false }
                    pool.append(ctx)
                    return true
                }
                if !kept { EVP_PKEY_CTX_free(ctx) }
            }
            return body(ctx)
        }

        private static func make() -> OpaquePointer? {
            guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { OpenSSLErrors.clear(); return nil }
            guard EVP_PKEY_fromdata_init(ctx) == 1 else { OpenSSLErrors.clear(); EVP_PKEY_CTX_free(ctx); return nil }
            return ctx
        }
    }
}
