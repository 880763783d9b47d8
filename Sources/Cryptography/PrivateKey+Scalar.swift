import Foundation
import SwiftASN1

extension PrivateKey {
    /// The P-256 key with private scalar `d` (32 bytes, big-endian, 0 < d < n), its public point
    /// computed by OpenSSL: an RFC 5915 ECPrivateKey without the optional public key, inside
    /// PKCS#8, which OpenSSL's decoder completes with d·G. For keys derived from a secret (the
    /// CLI wallet's PIN key, issue 21), where only `d` is known.
    public convenience init(p256Scalar d: [UInt8]) throws {
        guard d.count == 32 else { throw CryptoError.invalidKey("a P-256 scalar is 32 bytes") }
        var ecKey = DER.Serializer()
        try ecKey.appendConstructedNode(identifier: .sequence) { s in
            try s.serialize(1)
            try s.serialize(ASN1OctetString(contentBytes: d[...]))
            try s.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { s in
                try s.serialize(ASN1ObjectIdentifier.NamedCurves.secp256r1)
            }
        }
        var info = DER.Serializer()
        try info.appendConstructedNode(identifier: .sequence) { s in
            try s.serialize(0)
            try s.appendConstructedNode(identifier: .sequence) { s in
                try s.serialize(ASN1ObjectIdentifier.AlgorithmIdentifier.idEcPublicKey)
                try s.serialize(ASN1ObjectIdentifier.NamedCurves.secp256r1)
            }
            try s.serialize(ASN1OctetString(contentBytes: ecKey.serializedBytes[...]))
        }
        let pem = "-----BEGIN PRIVATE KEY-----\n" + Data(info.serializedBytes).base64EncodedString(options: .lineLength64Characters)
            + "\n-----END PRIVATE KEY-----\n"
        try self.init(pem: pem)
    }
}
