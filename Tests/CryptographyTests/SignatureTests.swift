import Cryptography
import Foundation
import XCTest

final class SignatureTests: XCTestCase {
    let message = Array("the quick brown fox".utf8)

    func testEachAlgorithmSignsAndVerifies() throws {
        let expectedLengths: [SignatureAlgorithm: Int] = [.ES256: 64, .ES384: 96, .ES512: 132, .EdDSA: 64, .RS256: 256, .PS256: 256]
        for algorithm in SignatureAlgorithm.allCases {
            let key = try PrivateKey(generatingFor: algorithm)
            let signature = try key.sign(message, algorithm: algorithm)
            XCTAssertEqual(signature.count, expectedLengths[algorithm], "\(algorithm)")
            XCTAssertTrue(key.publicKey.verify(signature: signature, data: message, algorithm: algorithm), "\(algorithm)")
            XCTAssertTrue(key.publicKey.fits(algorithm))
        }
    }

    func testTamperedDataOrSignatureFails() throws {
        for algorithm in SignatureAlgorithm.allCases {
            let key = try PrivateKey(generatingFor: algorithm)
            let signature = try key.sign(message, algorithm: algorithm)
            var otherMessage = message
            otherMessage[0] ^= 1
            var otherSignature = signature
            otherSignature[otherSignature.count / 2] ^= 0x40
            XCTAssertFalse(key.publicKey.verify(signature: signature, data: otherMessage, algorithm: algorithm), "\(algorithm)")
            XCTAssertFalse(key.publicKey.verify(signature: otherSignature, data: message, algorithm: algorithm), "\(algorithm)")
        }
    }

    func testDEREncodedECDSASignatureIsRefused() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let raw = try key.sign(message, algorithm: .ES256)
        let der = Self.derEncode(r: Array(raw[0..<32]), s: Array(raw[32...]))
        XCTAssertFalse(key.publicKey.verify(signature: der, data: message, algorithm: .ES256))
        XCTAssertTrue(key.publicKey.verify(signature: raw, data: message, algorithm: .ES256))
    }

    func testWrongLengthAndGarbageSignaturesAreFalseNotCrashes() throws {
        for algorithm in SignatureAlgorithm.allCases {
            let key = try PrivateKey(generatingFor: algorithm)
            let signature = try key.sign(message, algorithm: algorithm)
            for garbage in [[], [0], Array(signature.dropLast()), signature + [0], [UInt8](repeating: 0, count: signature.count),
                            [UInt8](repeating: 0xFF, count: signature.count), SecureRandom.bytes(signature.count)] {
                XCTAssertFalse(key.publicKey.verify(signature: garbage, data: message, algorithm: algorithm), "\(algorithm)")
            }
        }
    }

    func testKeyMustFitAlgorithm() throws {
        let p384 = try PrivateKey(generatingFor: .ES384)
        XCTAssertThrowsError(try p384.sign(message, algorithm: .ES256)) { XCTAssertEqual($0 as? CryptoError, .algorithmKeyMismatch) }
        let signature = try p384.sign(message, algorithm: .ES384)
        XCTAssertFalse(p384.publicKey.verify(signature: signature, data: message, algorithm: .ES256))
        XCTAssertFalse(p384.publicKey.fits(.ES256))
        XCTAssertFalse(p384.publicKey.fits(.EdDSA))

        let ed = try PrivateKey(generatingFor: .EdDSA)
        XCTAssertThrowsError(try ed.sign(message, algorithm: .ES256)) { XCTAssertEqual($0 as? CryptoError, .algorithmKeyMismatch) }
        XCTAssertFalse(ed.publicKey.fits(.RS256))
    }

    func testRS256AndPS256AreNotInterchangeable() throws {
        let key = try PrivateKey(generatingFor: .RS256)
        let pkcs1 = try key.sign(message, algorithm: .RS256)
        let pss = try key.sign(message, algorithm: .PS256)
        XCTAssertFalse(key.publicKey.verify(signature: pkcs1, data: message, algorithm: .PS256))
        XCTAssertFalse(key.publicKey.verify(signature: pss, data: message, algorithm: .RS256))
        // PSS is randomized; PKCS#1 v1.5 is deterministic.
        XCTAssertNotEqual(pss, try key.sign(message, algorithm: .PS256))
        XCTAssertEqual(pkcs1, try key.sign(message, algorithm: .RS256))
    }

    func testRSAKeysBelow2048BitsAreRefused() throws {
        let publicKey = try PublicKey(pem: PEMFixtures.rsa1024Public)
        let signature = try XCTUnwrap(Data(base64Encoded: PEMFixtures.rsa1024SignatureOverHello))
        XCTAssertFalse(publicKey.fits(.RS256))
        XCTAssertFalse(publicKey.verify(signature: Array(signature), data: Array("hello".utf8), algorithm: .RS256))
        let privateKey = try PrivateKey(pem: PEMFixtures.rsa1024Private)
        XCTAssertThrowsError(try privateKey.sign(message, algorithm: .RS256)) {
            XCTAssertEqual($0 as? CryptoError, .algorithmKeyMismatch)
        }
    }

    func testConcurrentSigningWithOneKey() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let results = ResultBox(count: 64)
        DispatchQueue.concurrentPerform(iterations: 64) { i in
            let data = Array("message \(i)".utf8)
            let ok = (try? key.sign(data, algorithm: .ES256)).map {
                key.publicKey.verify(signature: $0, data: data, algorithm: .ES256)
            } ?? false
            results.set(i, ok)
        }
        XCTAssertTrue(results.all)
    }

    /// Minimal DER SEQUENCE { INTEGER r, INTEGER s } for the DER-as-JWS test.
    static func derEncode(r: [UInt8], s: [UInt8]) -> [UInt8] {
        func integer(_ v: [UInt8]) -> [UInt8] {
            var v = Array(v.drop(while: { $0 == 0 }))
            if v.isEmpty || v[0] & 0x80 != 0 { v.insert(0, at: 0) }
            return [0x02, UInt8(v.count)] + v
        }
        let body = integer(r) + integer(s)
        return [0x30, UInt8(body.count)] + body
    }
}

/// Collects results from concurrentPerform without data races.
private final class ResultBox: @unchecked Sendable {
    private var values: [Bool]
    private let lock = NSLock()
    init(count: Int) { values = Array(repeating: false, count: count) }
    func set(_ i: Int, _ v: Bool) { lock.lock(); values[i] = v; lock.unlock() }
    var all: Bool { lock.lock(); defer { lock.unlock() }; return values.allSatisfy { $0 } }
}
