import CBOR
import Cryptography

/// A public COSE_Key (RFC 9052 §7) for the key types COSE_Sign1 here verifies with:
/// EC2 on P-256/384/521 (RFC 9053 §7.1) and OKP Ed25519 (RFC 9053 §7.2). This is the shape of
/// an mdoc's DeviceKey (ISO/IEC 18013-5 §9.1.2.4). Private members are refused, so a value of
/// this type is always safe to publish.
public struct COSEKey: Equatable, Sendable {
    public let components: PublicKeyComponents
    /// `kid` (label 2), when present.
    public let keyID: [UInt8]?
    /// `alg` (label 3), when present.
    public let algorithm: COSEAlgorithm?

    /// Common key parameters (RFC 9052 §7.1) and the EC2/OKP ones (RFC 9053 §7.1, §7.2).
    enum Label {
        static let kty: CBORValue = 1
        static let kid: CBORValue = 2
        static let alg: CBORValue = 3
        static let crv: CBORValue = -1
        static let x: CBORValue = -2
        static let y: CBORValue = -3
        static let d: CBORValue = -4
    }

    static let ktyOKP: Int64 = 1
    static let ktyEC2: Int64 = 2
    /// COSE Elliptic Curves registry values, by the names `PublicKeyComponents` uses.
    static let curves: [(name: String, id: Int64)] = [("P-256", 1), ("P-384", 2), ("P-521", 3), ("Ed25519", 6)]

    /// RSA keys have no COSE_Key form here (COSE_Sign1 here signs only with EC and EdDSA).
    public init(publicKey: PublicKey, keyID: [UInt8]? = nil, algorithm: COSEAlgorithm? = nil) throws(COSEError) {
        if case .rsa = publicKey.components { throw .invalidKey("RSA keys are not supported as COSE_Key") }
        self.components = publicKey.components
        self.keyID = keyID
        self.algorithm = algorithm
    }

    public init(decoding bytes: [UInt8]) throws(COSEError) {
        let value: CBORValue
        do { value = try CBORValue.decode(bytes) } catch { throw .invalidKey("\(error)") }
        try self.init(value)
    }

    /// Checks kty, crv and coordinate lengths; the point itself is checked by `publicKey()`.
    public init(_ value: CBORValue) throws(COSEError) {
        guard let entries = value.mapValue else { throw .invalidKey("COSE_Key must be a map") }
        let key = CBORValue.map(entries)
        if key[Label.d] != nil { throw .invalidKey("private key parameter d in a public COSE_Key") }
        guard let kty = key[Label.kty]?.intValue else { throw .invalidKey("missing or non-integer kty") }
        guard let crvID = key[Label.crv]?.intValue, let curve = Self.curves.first(where: { $0.id == crvID })?.name
        else { throw .invalidKey("missing or unsupported crv") }
        guard let x = key[Label.x]?.bytesValue else { throw .invalidKey("x must be a byte string") }
        switch kty {
        case Self.ktyEC2:
            guard let size = Self.coordinateSize(curve) else { throw .invalidKey("crv \(crvID) is not an EC2 curve") }
            // RFC 9053 §7.1.1: y may be a bool (point compression); this library does not accept it.
            guard let y = key[Label.y]?.bytesValue else { throw .invalidKey("y must be a byte string") }
            guard x.count == size, y.count == size else { throw .invalidKey("EC2 coordinates must be \(size) bytes") }
            components = .ec(curve: curve, x: x, y: y)
        case Self.ktyOKP:
            guard curve == "Ed25519" else { throw .invalidKey("crv \(crvID) is not an OKP signing curve") }
            guard x.count == 32 else { throw .invalidKey("Ed25519 x must be 32 bytes") }
            components = .okp(curve: curve, x: x)
        default:
            throw .invalidKey("unsupported kty \(kty)")
        }
        if let kid = key[Label.kid] {
            guard let bytes = kid.bytesValue else { throw .invalidKey("kid must be a byte string") }
            keyID = bytes
        } else {
            keyID = nil
        }
        if let alg = key[Label.alg] {
            guard let raw = alg.intValue, let a = COSEAlgorithm(rawValue: raw) else { throw .invalidKey("unsupported alg \(alg)") }
            algorithm = a
        } else {
            algorithm = nil
        }
    }

    static func coordinateSize(_ curve: String) -> Int? {
        ["P-256": 32, "P-384": 48, "P-521": 66][curve]
    }

    /// The key as a COSE_Key map (encode with `encoded()` for deterministic bytes).
    public var cborValue: CBORValue {
        var entries: [CBORMapEntry] = []
        switch components {
        case .ec(let curve, let x, let y):
            entries = [CBORMapEntry(Label.kty, CBORValue(Self.ktyEC2)), CBORMapEntry(Label.crv, CBORValue(Self.curveID(curve))),
                       CBORMapEntry(Label.x, .bytes(x)), CBORMapEntry(Label.y, .bytes(y))]
        case .okp(let curve, let x):
            entries = [CBORMapEntry(Label.kty, CBORValue(Self.ktyOKP)), CBORMapEntry(Label.crv, CBORValue(Self.curveID(curve))),
                       CBORMapEntry(Label.x, .bytes(x))]
        case .rsa:
            break // refused by every initializer
        }
        if let keyID { entries.append(CBORMapEntry(Label.kid, .bytes(keyID))) }
        if let algorithm { entries.append(CBORMapEntry(Label.alg, CBORValue(algorithm.rawValue))) }
        return .map(entries)
    }

    public func encoded() -> [UInt8] { cborValue.encoded() }

    private static func curveID(_ name: String) -> Int64 { curves.first { $0.name == name }?.id ?? 0 }

    /// The OpenSSL key, checked (an EC point must lie on its curve).
    public func publicKey() throws(COSEError) -> PublicKey {
        do { return try PublicKey(components: components) } catch { throw COSEError(error) }
    }
}
