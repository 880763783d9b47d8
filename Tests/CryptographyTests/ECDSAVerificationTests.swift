import Cryptography
import XCTest

/// The differential test of the EC_KEY fast path (Cryptography/Legacy/ECKeyFastPath.swift): a
/// public key imported from its numbers (every JWK) verifies ECDSA through a legacy EC_KEY; one
/// read from PEM goes through EVP_DigestVerify. Both must give the same verdict on every
/// signature, valid or not.
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

    private func keys(_ algorithm: SignatureAlgorithm) throws -> (PrivateKey, legacy: PublicKey, provider: PublicKey) {
        let key = try PrivateKey(generatingFor: algorithm)
        let legacy = try PublicKey(components: key.publicKey.components)
        let provider = try PublicKey(pem: try key.publicKey.pem())
        XCTAssertEqual(legacy, provider)
        return (key, legacy, provider)
    }

    func testBothPathsAgreeOnValidAndTamperedSignatures() throws {
        for algorithm in [SignatureAlgorithm.ES256, .ES384, .ES512] {
            let (key, legacy, provider) = try keys(algorithm)
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
                XCTAssertEqual(legacy.verify(signature: sig, data: data, algorithm: algorithm), expected, "\(algorithm) \(name), legacy")
                XCTAssertEqual(provider.verify(signature: sig, data: data, algorithm: algorithm), expected, "\(algorithm) \(name), EVP")
            }
            // A key never verifies for another curve's algorithm, on either path.
            for other in [SignatureAlgorithm.ES256, .ES384, .ES512] where other != algorithm {
                XCTAssertFalse(legacy.verify(signature: signature, data: message, algorithm: other))
                XCTAssertFalse(provider.verify(signature: signature, data: message, algorithm: other))
            }
        }
    }

    /// ECDSA accepts (r, n - s) as well as (r, s), and refuses r or s equal to n (out of
    /// [1, n-1]) or r + n style aliases that do not fit the coordinate size.
    func testOrderEdgesAgreeOnP256() throws {
        let (key, legacy, provider) = try keys(.ES256)
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
            XCTAssertEqual(legacy.verify(signature: sig, data: message, algorithm: .ES256), expected, "\(name), legacy")
            XCTAssertEqual(provider.verify(signature: sig, data: message, algorithm: .ES256), expected, "\(name), EVP")
        }
    }

    /// Keys imported from their numbers are used by the EVP paths too (a certificate for the key,
    /// its PEM): OpenSSL exports the legacy key to its provider there.
    func testImportedKeyStillWorksOutsideVerification() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let imported = try PublicKey(components: key.publicKey.components)
        let reread = try PublicKey(pem: try imported.pem())
        XCTAssertEqual(reread, imported)
        let signature = try key.sign(message, algorithm: .ES256)
        XCTAssertTrue(reread.verify(signature: signature, data: message, algorithm: .ES256))
    }

    /// A point off the curve is refused at import, as before.
    func testPointOffTheCurveIsRefused() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        guard case .ec(let curve, let x, var y) = key.publicKey.components else { return XCTFail("not EC") }
        y[31] ^= 1
        XCTAssertThrowsError(try PublicKey(components: .ec(curve: curve, x: x, y: y)))
    }
}
