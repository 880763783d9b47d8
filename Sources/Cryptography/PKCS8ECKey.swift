import COpenSSL
import Foundation
import SwiftASN1
import Support

/// The parts of an unencrypted PKCS#8 EC private key (RFC 5208 PrivateKeyInfo holding an
/// RFC 5915 ECPrivateKey on a named curve, with its public point), read from DER; `PrivateKey(pem:)`
/// makes the key of them with `KeyComponentsImport.ecKeyPair` (EVP_PKEY_fromdata).
///
/// Why not OpenSSL's decoder: a server hosting a large federation reads a leaf's PEM on most
/// cold resolves, and the decoder chain (PKCS#8 to a legacy EC key to a provider key) costs more than
/// EVP_PKEY_fromdata of the parts, which both build the curve group again (measured: see
/// docs/performance.md, "Cryptography"). Reading the public point from the DER also saves
/// exporting it from the key. The DER is read with swift-asn1, and only the exact shape OpenSSL
/// writes is taken; anything else (other versions, attributes, explicit curve parameters, no
/// public key, other key types) gives nil and takes the decoder.
///
/// The import checks what the decoder checks: the public point is decoded and must lie on the
/// curve (EC_POINT_oct2point); as with the decoder, it is not recomputed from the private scalar.
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

    init(curve: EllipticCurve, privateScalar: [UInt8], publicPoint: [UInt8]) {
        self.curve = curve
        self.privateScalar = privateScalar
        self.publicPoint = publicPoint
    }

    /// The parts of a key OpenSSL holds: the private scalar through the parameter API
    /// (EVP_PKEY_get_bn_param, padded to the curve's size as OpenSSL's encoder pads it) and the
    /// public point the key already gave. Nil when OpenSSL does not hand out the scalar this
    /// way (not expected of a provider key).
    init?(curve: EllipticCurve, pkey: OpaquePointer, components: PublicKeyComponents) {
        guard case .ec(_, let x, let y) = components else { return nil }
        var bn: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_PRIV_KEY, &bn) == 1, let bn else { OpenSSLErrors.clear(); return nil }
        defer { BN_clear_free(bn) }
        let size = curve.coordinateSize
        var scalar = [UInt8](repeating: 0, count: size)
        guard BN_bn2binpad(bn, &scalar, Int32(size)) == Int32(size) else { return nil }
        self.init(curve: curve, privateScalar: scalar, publicPoint: [0x04] + x + y)
    }

    /// The PrivateKeyInfo DER in the shape OpenSSL's encoder writes for a named-curve key: the
    /// ECPrivateKey without [0] parameters (the algorithm names the curve) and with [1] the
    /// uncompressed public point. Writing it from the parts saves OpenSSL's encoder, which
    /// searches every encoder it has for each key (measured: see docs/performance.md).
    func der() throws -> [UInt8] {
        var ecKey = DER.Serializer()
        try ecKey.appendConstructedNode(identifier: .sequence) { s in
            try s.serialize(1)
            try s.serialize(ASN1OctetString(contentBytes: privateScalar[...]))
            try s.serialize(explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific) { s in
                try s.serialize(ASN1BitString(bytes: publicPoint[...]))
            }
        }
        var info = DER.Serializer()
        try info.appendConstructedNode(identifier: .sequence) { s in
            try s.serialize(0)
            try s.appendConstructedNode(identifier: .sequence) { s in
                try s.serialize(ASN1ObjectIdentifier.AlgorithmIdentifier.idEcPublicKey)
                try s.serialize(Self.curveOID(curve))
            }
            try s.serialize(ASN1OctetString(contentBytes: ecKey.serializedBytes[...]))
        }
        return info.serializedBytes
    }

    /// `der()` as OpenSSL's PEM writer writes it: base64 in lines of 64 characters, each ended
    /// by a line feed.
    func pem() throws -> String {
        "-----BEGIN PRIVATE KEY-----\n" + Data(try der()).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END PRIVATE KEY-----\n"
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
            // [1] publicKey: required here (the import takes the point from it), an
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
}
