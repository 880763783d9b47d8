/// An EC private key as its JWK parts (RFC 7518 §6.2.2: `crv`, `x`, `y`, `d`), for the CLI's test
/// wallet file, which keeps its keys as private JWKs. Through PKCS#8 DER (swift-asn1) and the
/// usual import, so OpenSSL still checks the key.
extension PrivateKey {
    /// The private scalar `d` (big-endian, the curve's size); nil for a key that is not EC.
    public func ecPrivateScalar() throws -> [UInt8]? {
        guard let der = PEMCodec.pkcs8DER(try pemPKCS8()), let ec = PKCS8ECKey(der: der) else { return nil }
        return ec.privateScalar
    }

    /// The key with scalar `d` and public point (x, y) on the JOSE-named curve. The import does
    /// not recompute the point from `d`, so a point that is not `d`'s is caught by signing once.
    public convenience init(joseCurve: String, d: [UInt8], x: [UInt8], y: [UInt8]) throws {
        guard let curve = EllipticCurve.allCases.first(where: { $0.joseName == joseCurve }) else {
            throw CryptoError.invalidKey("unsupported curve \(joseCurve)")
        }
        let size = curve.coordinateSize
        guard d.count == size, x.count == size, y.count == size else { throw CryptoError.invalidKey("EC key parts of the wrong size") }
        // RFC 5915 §3 ECPrivateKey inside RFC 5208 §5 PrivateKeyInfo, the shape OpenSSL writes.
        try self.init(pem: PKCS8ECKey(curve: curve, privateScalar: d, publicPoint: [0x04] + x + y).pem())
        let probe: [UInt8] = Array("trustbed key check".utf8)
        let algorithm: SignatureAlgorithm = curve == .p256 ? .ES256 : curve == .p384 ? .ES384 : .ES512
        guard publicKey.verify(signature: try sign(probe, algorithm: algorithm), data: probe, algorithm: algorithm) else {
            throw CryptoError.invalidKey("the public point is not the private scalar's")
        }
    }
}
