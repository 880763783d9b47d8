import Dispatch
import Foundation
import XCTest
import COpenSSL
@testable import Cryptography

/// The EC import of `PrivateKey(pem:)` (`PKCS8ECKey` read with swift-asn1, the key made with
/// `KeyComponentsImport.ecKeyPair`) against OpenSSL's own decoder, and the reused signing
/// contexts of `ECDSASigner`.
final class PKCS8ECKeyTests: XCTestCase {
    let message = Array("the quick brown fox".utf8)
    static let ecAlgorithms: [SignatureAlgorithm] = [.ES256, .ES384, .ES512]

    /// The PKCS#8 DER of a fresh key (OpenSSL's encoder), and the key.
    private func generated(_ algorithm: SignatureAlgorithm) throws -> (der: [UInt8], key: PrivateKey) {
        let key = try PrivateKey(generatingFor: algorithm)
        return (try XCTUnwrap(PEMCodec.pkcs8DER(key.pemPKCS8())), key)
    }

    private func pem(_ der: [UInt8]) -> String {
        "-----BEGIN PRIVATE KEY-----\n" + Data(der).base64EncodedString(options: .lineLength64Characters) + "\n-----END PRIVATE KEY-----\n"
    }

    /// The same key through OpenSSL's decoder, the way every other key is read.
    private func decodedByOpenSSL(_ der: [UInt8]) throws -> PublicKeyComponents {
        // `PublicKey(adopting:)` reads the numbers of any key, private ones too, and frees it.
        try PublicKey(adopting: PEMCodec.readPrivateKey(pem(der))).components
    }

    func testFastPathReadsWhatOpenSSLsDecoderReads() throws {
        for algorithm in Self.ecAlgorithms {
            let (der, original) = try generated(algorithm)
            let parts = try XCTUnwrap(PKCS8ECKey(der: der), "\(algorithm)")
            XCTAssertEqual(parts.components, original.publicComponents, "\(algorithm)")
            XCTAssertEqual(parts.components, try decodedByOpenSSL(der), "\(algorithm)")
            let restored = try PrivateKey(pem: pem(der))
            XCTAssertEqual(restored.publicComponents, original.publicComponents)
            // The imported key signs, and its signatures verify under the original public key.
            for _ in 0 ..< 3 {
                let signature = try restored.sign(message, algorithm: algorithm)
                XCTAssertTrue(original.publicKey.verify(signature: signature, data: message, algorithm: algorithm), "\(algorithm)")
            }
            // And it writes the same PKCS#8 back.
            XCTAssertEqual(PEMCodec.pkcs8DER(try restored.pemPKCS8()), der)
        }
    }

    /// `pemPKCS8` writes an EC key from its parts: the very text OpenSSL's encoder writes, for
    /// generated keys and for keys read back from their parts, and the text reads back to the
    /// same key.
    func testPKCS8FromPartsIsWhatOpenSSLsEncoderWrites() throws {
        for algorithm in Self.ecAlgorithms {
            for _ in 0 ..< 8 {
                let key = try PrivateKey(generatingFor: algorithm)
                XCTAssertNotNil(PKCS8ECKey(curve: try XCTUnwrap(algorithm.ellipticCurve), pkey: key.pkey, components: key.publicComponents),
                                "a generated key's scalar is read from its parts (\(algorithm))")
                let written = try key.pemPKCS8()
                XCTAssertEqual(written, try PEMCodec.writePrivateKey(key.pkey), "\(algorithm)")
                let restored = try PrivateKey(pem: written)
                XCTAssertNotNil(PKCS8ECKey(curve: try XCTUnwrap(algorithm.ellipticCurve), pkey: restored.pkey,
                                           components: restored.publicComponents),
                                "so is an imported key's: it is a provider key (\(algorithm))")
                XCTAssertEqual(restored.publicComponents, key.publicComponents)
                XCTAssertEqual(try restored.pemPKCS8(), written, "\(algorithm)")
                let signature = try restored.sign(message, algorithm: algorithm)
                XCTAssertTrue(key.publicKey.verify(signature: signature, data: message, algorithm: algorithm))
            }
        }
    }

    /// A P-384 key from the openssl CLI (`openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384`).
    func testKeyFromTheOpenSSLCommandLine() throws {
        let cli = """
            -----BEGIN PRIVATE KEY-----
            MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDCBC/r1M3LO+0r/3qZw
            faExyaK3s3DuNE2grW6gbCC7BFuBoqnRWvQIqVbgPPrxdIChZANiAAQN4BAEAoot
            u76OOwmUwLYe15+PdXDmv/0ksRuyLG/b1FztBs84ZiQFlYyZbC/e5hzJklTv8a9/
            hPjVjyGB+WlyryWB+h0B/UPbX+Coiv+cQQzvBPOdGZF2cKXRHyX2fRs=
            -----END PRIVATE KEY-----
            """
        let der = try XCTUnwrap(PEMCodec.pkcs8DER(cli))
        let parts = try XCTUnwrap(PKCS8ECKey(der: der))
        XCTAssertEqual(parts.curve, .p384)
        XCTAssertEqual(parts.components, try decodedByOpenSSL(der))
        let key = try PrivateKey(pem: cli)
        let signature = try key.sign(message, algorithm: .ES384)
        XCTAssertTrue(key.publicKey.verify(signature: signature, data: message, algorithm: .ES384))
    }

    // MARK: Shapes the import leaves to the decoder

    private func tlv(_ tag: UInt8, _ contents: [UInt8]) -> [UInt8] {
        let n = contents.count
        let length: [UInt8] = n < 0x80 ? [UInt8(n)] : n < 0x100 ? [0x81, UInt8(n)] : [0x82, UInt8(n >> 8), UInt8(n & 0xFF)]
        return [tag] + length + contents
    }

    private let p256OID: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
    private let ecPublicKeyOID: [UInt8] = [0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]

    /// PKCS#8 for P-256 from parts; `inner` is the ECPrivateKey's contents after its version.
    private func pkcs8(version: UInt8 = 0, inner: [UInt8], trailing: [UInt8] = []) -> [UInt8] {
        let ecPrivateKey = tlv(0x30, [0x02, 0x01, 0x01] + inner)
        return tlv(0x30, [0x02, 0x01, version] + tlv(0x30, ecPublicKeyOID + p256OID) + tlv(0x04, ecPrivateKey) + trailing)
    }

    func testUnusualShapesFallBackToTheDecoderAndStillLoad() throws {
        let (der, original) = try generated(.ES256)
        let parts = try XCTUnwrap(PKCS8ECKey(der: der))
        let scalar = tlv(0x04, parts.privateScalar)
        let publicKey = tlv(0xA1, tlv(0x03, [0x00] + parts.publicPoint))

        // [0] parameters naming the same curve: still imported from the parts.
        let withParameters = pkcs8(inner: scalar + tlv(0xA0, p256OID) + publicKey)
        XCTAssertEqual(PKCS8ECKey(der: withParameters)?.components, original.publicComponents)
        XCTAssertEqual(try PrivateKey(pem: pem(withParameters)).publicComponents, original.publicComponents)

        // No public key: the decoder computes it from the scalar.
        let withoutPublicKey = pkcs8(inner: scalar)
        XCTAssertNil(PKCS8ECKey(der: withoutPublicKey))
        XCTAssertEqual(try PrivateKey(pem: pem(withoutPublicKey)).publicComponents, original.publicComponents)

        // Things `PKCS8ECKey` does not read; none may be read differently from OpenSSL.
        let notRead: [String: [UInt8]] = [
            "version 1": pkcs8(version: 1, inner: scalar + publicKey),
            "trailing attributes": pkcs8(inner: scalar + publicKey, trailing: tlv(0xA0, [])),
            "trailing byte after the key": der + [0x00],
            "truncated": Array(der.dropLast()),
            "short scalar": pkcs8(inner: tlv(0x04, Array(parts.privateScalar.dropFirst())) + publicKey),
            "compressed point": pkcs8(inner: scalar + tlv(0xA1, tlv(0x03, [0x00, 0x02 | (parts.publicPoint[64] & 1)] + parts.publicPoint[1 ... 32]))),
            "other curve in [0]": pkcs8(inner: scalar + tlv(0xA0, [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x22]) + publicKey),
            "long-form length where short fits": [0x30, 0x81, UInt8(der.count - 2)] + der[2...],
        ]
        for (what, bytes) in notRead {
            XCTAssertNil(PKCS8ECKey(der: bytes), what)
        }
        XCTAssertNil(PKCS8ECKey(der: try generated(.EdDSA).der), "Ed25519")
        XCTAssertNil(PKCS8ECKey(der: try generated(.RS256).der), "RSA")
    }

    func testAPointOffTheCurveIsRefused() throws {
        let (der, _) = try generated(.ES256)
        let parts = try XCTUnwrap(PKCS8ECKey(der: der))
        var point = parts.publicPoint
        point[64] ^= 1
        let bad = pkcs8(inner: tlv(0x04, parts.privateScalar) + tlv(0xA1, tlv(0x03, [0x00] + point)))
        let read = try XCTUnwrap(PKCS8ECKey(der: bad), "the shape is right")
        XCTAssertThrowsError(try KeyComponentsImport.ecKeyPair(curve: read.curve, scalar: read.privateScalar, point: read.publicPoint),
                             "OpenSSL refuses the point")
        XCTAssertThrowsError(try PrivateKey(pem: pem(bad)), "and so does the decoder")
    }

    /// The imported key pair is a provider EC key (its context made from the curve's shared
    /// template) and signs from many threads at once: every signature verifies under OpenSSL's
    /// own reading of the key, for each curve.
    func testImportedKeySignsFromManyThreads() throws {
        for algorithm in Self.ecAlgorithms {
            let (der, _) = try generated(algorithm)
            let parts = try XCTUnwrap(PKCS8ECKey(der: der), "\(algorithm)")
            let made = try KeyComponentsImport.ecKeyPair(curve: parts.curve, scalar: parts.privateScalar, point: parts.publicPoint)
            XCTAssertEqual(EVP_PKEY_get_base_id(made), EVP_PKEY_EC)
            XCTAssertNotNil(EVP_PKEY_get0_provider(made), "a provider key, not a legacy one")
            EVP_PKEY_free(made)
            let key = try PrivateKey(pem: pem(der))
            let verifier = try PublicKey(adopting: PEMCodec.readPrivateKey(pem(der)))
            let lock = NSLock()
            nonisolated(unsafe) var failures = 0
            let message = self.message
            DispatchQueue.concurrentPerform(iterations: 32) { i in
                let data = message + [UInt8(i)]
                let ok = (try? key.sign(data, algorithm: algorithm)).map { verifier.verify(signature: $0, data: data, algorithm: algorithm) }
                if ok != true { lock.withLock { failures += 1 } }
            }
            XCTAssertEqual(lock.withLock { failures }, 0, "\(algorithm)")
        }
    }

    // MARK: Signing contexts

    func testContextsAreReusedAndSafeAcrossThreads() throws {
        for algorithm in Self.ecAlgorithms {
            let key = try PrivateKey(generatingFor: algorithm)
            let lock = NSLock()
            nonisolated(unsafe) var failures = 0
            let message = self.message
            DispatchQueue.concurrentPerform(iterations: 64) { i in
                let data = message + [UInt8(i)]
                let ok = (try? key.sign(data, algorithm: algorithm)).map { key.publicKey.verify(signature: $0, data: data, algorithm: algorithm) }
                if ok != true { lock.withLock { failures += 1 } }
            }
            XCTAssertEqual(lock.withLock { failures }, 0, "\(algorithm)")
        }
    }
}
