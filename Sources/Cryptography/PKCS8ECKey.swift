import COpenSSL
import Support

/// The parts of an unencrypted PKCS#8 EC private key (RFC 5208 PrivateKeyInfo holding an
/// RFC 5915 ECPrivateKey on a named curve, with its public point), read from DER and made into
/// an EVP_PKEY with one EVP_PKEY_fromdata.
///
/// Why not OpenSSL's decoder: a server hosting 100,000 entities reads a leaf's PEM on most cold
/// resolves, and OSSL_DECODER (chain of decoders, PKCS#8 to EC_KEY to provider key) took 264k
/// instructions a key where the import takes 199k, 139k of it building the curve group, which
/// any way of making an OpenSSL 3.0 EC key repeats. Reading the public point from the DER also
/// saves exporting it again (57k; callgrind, P-256). Only the exact shape
/// OpenSSL writes is read here; anything else (other versions, attributes, explicit curve
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

    /// id-ecPublicKey (RFC 5480 §2.1.1), as a whole DER OBJECT IDENTIFIER.
    private static let ecPublicKeyOID: [UInt8] = [0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]

    /// The named-curve OBJECT IDENTIFIER of each curve (RFC 5480 §2.1.1.1), whole DER.
    private static func curveOID(_ curve: EllipticCurve) -> [UInt8] {
        switch curve {
        case .p256: return [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
        case .p384: return [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x22]
        case .p521: return [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x23]
        }
    }

    init?(der: [UInt8]) {
        var outer = DERReader(der)
        guard var info = outer.read(tag: 0x30), outer.isAtEnd,
              info.read(tag: 0x02)?.rest == [0x00],
              var algorithm = info.read(tag: 0x30),
              algorithm.readWhole(tag: 0x06) == Self.ecPublicKeyOID,
              let curveOID = algorithm.readWhole(tag: 0x06), algorithm.isAtEnd,
              let curve = EllipticCurve.allCases.first(where: { Self.curveOID($0) == curveOID }),
              let octets = info.read(tag: 0x04), info.isAtEnd
        else { return nil }
        var inner = DERReader(octets.rest)
        guard var ecKey = inner.read(tag: 0x30), inner.isAtEnd,
              ecKey.read(tag: 0x02)?.rest == [0x01],
              let scalar = ecKey.read(tag: 0x04)?.rest, scalar.count == curve.coordinateSize
        else { return nil }
        // [0] parameters: optional, and then the same curve as the algorithm names.
        if ecKey.peek == 0xA0 {
            guard var parameters = ecKey.read(tag: 0xA0), parameters.readWhole(tag: 0x06) == curveOID, parameters.isAtEnd
            else { return nil }
        }
        // [1] publicKey BIT STRING: no unused bits, an uncompressed point of the curve's size.
        guard var publicKey = ecKey.read(tag: 0xA1), ecKey.isAtEnd,
              let bits = publicKey.read(tag: 0x03)?.rest, publicKey.isAtEnd,
              bits.count == 2 + 2 * curve.coordinateSize, bits[0] == 0x00, bits[1] == 0x04
        else { return nil }
        self.curve = curve
        privateScalar = scalar
        publicPoint = Array(bits.dropFirst())
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

/// Reads DER TLVs (X.690 §8.1) from a byte array: definite lengths in minimal form only, as DER
/// requires. Enough for the fixed shapes read in this target, not a general ASN.1 parser.
struct DERReader {
    private let bytes: [UInt8]
    private var offset: Int
    private let end: Int

    init(_ bytes: [UInt8]) { self.init(bytes, from: 0, to: bytes.count) }

    private init(_ bytes: [UInt8], from start: Int, to end: Int) {
        self.bytes = bytes
        offset = start
        self.end = end
    }

    var isAtEnd: Bool { offset == end }
    /// The next tag byte, if any.
    var peek: UInt8? { offset < end ? bytes[offset] : nil }
    /// The unread bytes.
    var rest: [UInt8] { Array(bytes[offset ..< end]) }

    /// A reader over the contents of the next element if it has `tag`; else nil, nothing consumed.
    mutating func read(tag: UInt8) -> DERReader? {
        guard let (start, length) = header(tag: tag) else { return nil }
        offset = start + length
        return DERReader(bytes, from: start, to: start + length)
    }

    /// The next element if it has `tag`, header included (e.g. an OBJECT IDENTIFIER to compare whole).
    mutating func readWhole(tag: UInt8) -> [UInt8]? {
        let first = offset
        guard let (start, length) = header(tag: tag) else { return nil }
        offset = start + length
        return Array(bytes[first ..< offset])
    }

    /// Start and length of the contents of the element at `offset`, if its tag is `tag`.
    private func header(tag: UInt8) -> (Int, Int)? {
        guard offset + 2 <= end, bytes[offset] == tag else { return nil }
        var i = offset + 1
        let first = bytes[i]
        i += 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            // Long form only when needed, at most 3 length bytes, no leading zero byte.
            guard count >= 1, count <= 3, i + count <= end, bytes[i] != 0 else { return nil }
            for _ in 0 ..< count {
                length = length << 8 | Int(bytes[i])
                i += 1
            }
            guard length >= 0x80 else { return nil }
        }
        guard length <= end - i else { return nil }
        return (i, length)
    }
}
