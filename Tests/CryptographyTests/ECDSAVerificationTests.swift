import COpenSSL
import XCTest
@testable import Cryptography

/// The differential test of ECDSA verification: `PublicKey.verify` hashes with the curve's
/// once-fetched digest and verifies with EVP_PKEY_verify (`EVPSignature.verifyECDSA`), on a key
/// imported from its numbers (every JWK and COSE key: a copy of a per-curve template given the
/// point) or read from PEM. Plain EVP_DigestVerify over the DER of r || s (`digestVerify`
/// below, the reference) and the known verdict must agree with it on every signature, valid or
/// not: r or s zero or n, high s, wrong lengths, other curves (RFC 7518 §3.4).
final class ECDSAVerificationTests: XCTestCase {
    let message = Array("the quick brown fox".utf8)

    /// The order n of P-256 (SEC 2 §2.4.2), big-endian.
    static let p256Order: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
    ]

    /// a - b for big-endian numbers of equal length, a >= b.
    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: a.count)
        var borrow = 0
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            var d = Int(a[i]) - Int(b[i]) - borrow
            borrow = d < 0 ? 1 : 0
            if d < 0 { d += 256 }
            out[i] = UInt8(d)
        }
        return out
    }

    /// The key imported from its numbers and the same key read from PEM (OpenSSL's decoder).
    private func keys(_ algorithm: SignatureAlgorithm) throws -> (PrivateKey, imported: PublicKey, decoded: PublicKey) {
        let key = try PrivateKey(generatingFor: algorithm)
        let imported = try PublicKey(components: key.publicKey.components)
        let decoded = try PublicKey(pem: try key.publicKey.pem())
        XCTAssertEqual(imported, decoded)
        return (key, imported, decoded)
    }

    /// The reference: OpenSSL's one-shot EVP_DigestVerify with the digest fetched by name, over
    /// the DER of r || s (nil DER, a signature of the wrong length, is refused as JOSE refuses it).
    private func digestVerify(_ signature: [UInt8], data: [UInt8], key: PublicKey, algorithm: SignatureAlgorithm) -> Bool {
        guard let curve = algorithm.ellipticCurve,
              let der = ECDSASignatureEncoding.der(fromRaw: signature, coordinateSize: curve.coordinateSize),
              let ctx = EVP_MD_CTX_new()
        else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit_ex(ctx, nil, algorithm.digestName, nil, nil, key.pkey, nil) == 1 else { return false }
        let result = EVP_DigestVerify(ctx, der, der.count, data, data.count)
        ERR_clear_error()
        return result == 1
    }

    /// Our verdict on both keys, the reference's, and the expected one all agree.
    private func check(_ name: String, _ sig: [UInt8], _ data: [UInt8], _ expected: Bool, _ algorithm: SignatureAlgorithm,
                       imported: PublicKey, decoded: PublicKey, line: UInt = #line) {
        XCTAssertEqual(imported.verify(signature: sig, data: data, algorithm: algorithm), expected, "\(algorithm) \(name), imported",
                       line: line)
        XCTAssertEqual(decoded.verify(signature: sig, data: data, algorithm: algorithm), expected, "\(algorithm) \(name), PEM", line: line)
        XCTAssertEqual(digestVerify(sig, data: data, key: imported, algorithm: algorithm), expected,
                       "\(algorithm) \(name), EVP_DigestVerify", line: line)
    }

    func testBothPathsAgreeOnValidAndTamperedSignatures() throws {
        for algorithm in [SignatureAlgorithm.ES256, .ES384, .ES512] {
            let (key, imported, decoded) = try keys(algorithm)
            let signature = try key.sign(message, algorithm: algorithm)
            let half = signature.count / 2
            var cases: [(String, [UInt8], [UInt8], Bool)] = [("valid", signature, message, true)]
            var otherMessage = message
            otherMessage[3] ^= 1
            cases.append(("other message", signature, otherMessage, false))
            for index in [0, half - 1, half, signature.count - 1] {
                var flipped = signature
                flipped[index] ^= 0x01
                cases.append(("bit flipped at \(index)", flipped, message, false))
            }
            cases.append(("r = 0", [UInt8](repeating: 0, count: half) + signature[half...], message, false))
            cases.append(("s = 0", Array(signature[..<half]) + [UInt8](repeating: 0, count: half), message, false))
            cases.append(("all ones", [UInt8](repeating: 0xFF, count: signature.count), message, false))
            cases.append(("one byte short", Array(signature.dropLast()), message, false))
            cases.append(("one byte long", signature + [0], message, false))
            cases.append(("empty", [], message, false))
            for (name, sig, data, expected) in cases {
                check(name, sig, data, expected, algorithm, imported: imported, decoded: decoded)
            }
            // A key never verifies for another curve's algorithm, on either key.
            for other in [SignatureAlgorithm.ES256, .ES384, .ES512] where other != algorithm {
                XCTAssertFalse(imported.verify(signature: signature, data: message, algorithm: other))
                XCTAssertFalse(decoded.verify(signature: signature, data: message, algorithm: other))
            }
        }
    }

    /// ECDSA accepts (r, n - s) as well as (r, s), and refuses r or s equal to n (out of
    /// [1, n-1]) or r + n style aliases that do not fit the coordinate size.
    func testOrderEdgesAgreeOnP256() throws {
        let (key, imported, decoded) = try keys(.ES256)
        let signature = try key.sign(message, algorithm: .ES256)
        let r = Array(signature[..<32]), s = Array(signature[32...])
        let n = Self.p256Order
        let cases: [(String, [UInt8], Bool)] = [
            ("high s (n - s)", r + Self.subtract(n, s), true),
            ("s = n", r + n, false),
            ("r = n", n + s, false),
            ("s = n - 1", r + Self.subtract(n, [UInt8](repeating: 0, count: 31) + [1]), false),
        ]
        for (name, sig, expected) in cases {
            check(name, sig, message, expected, .ES256, imported: imported, decoded: decoded)
        }
    }

    /// Keys imported from their numbers are used by the other EVP paths too (a certificate for
    /// the key, its PEM): the copy of the curve's template is a whole provider key.
    func testImportedKeyStillWorksOutsideVerification() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let imported = try PublicKey(components: key.publicKey.components)
        let reread = try PublicKey(pem: try imported.pem())
        XCTAssertEqual(reread, imported)
        let signature = try key.sign(message, algorithm: .ES256)
        XCTAssertTrue(reread.verify(signature: signature, data: message, algorithm: .ES256))
    }

    /// r || s to DER is written in one pass into a buffer of the largest size (2 × coordinate
    /// size + 9): the largest signature of each curve (r and s all ones, each needing a leading
    /// zero; for P-521 it fills the buffer exactly) fits and reads back; the smallest (r = s = 1)
    /// is short DER.
    func testDEROfTheLargestAndSmallestSignatures() throws {
        for curve in EllipticCurve.allCases {
            let size = curve.coordinateSize
            let largest = [UInt8](repeating: 0xFF, count: 2 * size)
            let der = try XCTUnwrap(ECDSASignatureEncoding.der(fromRaw: largest, coordinateSize: size))
            // Two INTEGERs of size + 1 bytes; the SEQUENCE's length needs a second byte from 128 on (P-521).
            let content = 2 * (2 + size + 1)
            XCTAssertEqual(der.count, content + (content < 128 ? 2 : 3), "\(curve)")
            XCTAssertLessThanOrEqual(der.count, 2 * size + 9, "\(curve)")
            XCTAssertEqual(ECDSASignatureEncoding.raw(fromDER: der, coordinateSize: size), largest, "\(curve)")
            let one = [UInt8](repeating: 0, count: size - 1) + [1]
            XCTAssertEqual(ECDSASignatureEncoding.der(fromRaw: one + one, coordinateSize: size), [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01])
            XCTAssertNil(ECDSASignatureEncoding.der(fromRaw: largest + [0], coordinateSize: size))
        }
    }

    /// A point off the curve is refused at import, as before.
    func testPointOffTheCurveIsRefused() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        guard case .ec(let curve, let x, var y) = key.publicKey.components else { return XCTFail("not EC") }
        y[31] ^= 1
        XCTAssertThrowsError(try PublicKey(components: .ec(curve: curve, x: x, y: y)))
    }
}
