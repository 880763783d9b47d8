import Cryptography
import XCTest

final class PublicKeyComponentsTests: XCTestCase {
    func testComponentsRoundTrip() throws {
        for algorithm in SignatureAlgorithm.allCases {
            let key = try PrivateKey(generatingFor: algorithm)
            let rebuilt = try PublicKey(components: key.publicKey.components)
            XCTAssertEqual(rebuilt.components, key.publicKey.components)
            let data = Array("data".utf8)
            XCTAssertTrue(rebuilt.verify(signature: try key.sign(data, algorithm: algorithm), data: data, algorithm: algorithm))
        }
    }

    func testComponentShapes() throws {
        guard case .ec("P-521", let x, let y) = try PrivateKey(generatingFor: .ES512).publicKey.components else {
            return XCTFail("expected P-521")
        }
        XCTAssertEqual(x.count, 66)
        XCTAssertEqual(y.count, 66)
        guard case .okp("Ed25519", let ed) = try PrivateKey(generatingFor: .EdDSA).publicKey.components else {
            return XCTFail("expected Ed25519")
        }
        XCTAssertEqual(ed.count, 32)
        guard case .rsa(let n, let e) = try PrivateKey(generatingFor: .RS256).publicKey.components else {
            return XCTFail("expected RSA")
        }
        XCTAssertEqual(n.count, 256)
        XCTAssertEqual(e, [1, 0, 1])
    }

    func testPointOffTheCurveIsRefused() throws {
        guard case .ec(let curve, let x, var y) = try PrivateKey(generatingFor: .ES256).publicKey.components else {
            return XCTFail("expected EC")
        }
        y[31] ^= 1
        XCTAssertThrowsError(try PublicKey(components: .ec(curve: curve, x: x, y: y)))
        XCTAssertThrowsError(try PublicKey(components: .ec(curve: curve, x: [UInt8](repeating: 0, count: 32), y: [UInt8](repeating: 0, count: 32))))
    }

    /// EC keys are copies of one template key per curve: each copy must hold its own point,
    /// and a refused point must leave the template usable.
    func testImportedECKeysAreIndependentCopies() throws {
        for algorithm in [SignatureAlgorithm.ES256, .ES384, .ES512] {
            let a = try PrivateKey(generatingFor: algorithm), b = try PrivateKey(generatingFor: algorithm)
            guard case .ec(let curve, let x, var y) = b.publicKey.components else { return XCTFail("expected EC") }
            let importedA = try PublicKey(components: a.publicKey.components)
            y[y.count - 1] ^= 1
            XCTAssertThrowsError(try PublicKey(components: .ec(curve: curve, x: x, y: y)))
            let importedB = try PublicKey(components: b.publicKey.components)
            let data = Array("data".utf8)
            let signedByA = try a.sign(data, algorithm: algorithm), signedByB = try b.sign(data, algorithm: algorithm)
            XCTAssertEqual(importedA.components, a.publicKey.components)
            XCTAssertEqual(importedB.components, b.publicKey.components)
            XCTAssertTrue(importedA.verify(signature: signedByA, data: data, algorithm: algorithm))
            XCTAssertFalse(importedA.verify(signature: signedByB, data: data, algorithm: algorithm))
            XCTAssertTrue(importedB.verify(signature: signedByB, data: data, algorithm: algorithm))
        }
    }

    func testWrongSizesAndCurvesAreRefused() throws {
        guard case .ec(_, let x, let y) = try PrivateKey(generatingFor: .ES256).publicKey.components else {
            return XCTFail("expected EC")
        }
        XCTAssertThrowsError(try PublicKey(components: .ec(curve: "P-384", x: x, y: y)))
        XCTAssertThrowsError(try PublicKey(components: .ec(curve: "P-256", x: Array(x.dropFirst()), y: y)))
        XCTAssertThrowsError(try PublicKey(components: .ec(curve: "secp256k1", x: x, y: y)))
        XCTAssertThrowsError(try PublicKey(components: .okp(curve: "Ed25519", x: [1, 2, 3])))
        XCTAssertThrowsError(try PublicKey(components: .okp(curve: "X25519", x: [UInt8](repeating: 9, count: 32))))
        XCTAssertThrowsError(try PublicKey(components: .rsa(n: [], e: [1, 0, 1])))
        XCTAssertThrowsError(try PublicKey(components: .rsa(n: [UInt8](repeating: 0xFF, count: 256), e: [1])))
        XCTAssertThrowsError(try PublicKey(components: .rsa(n: [UInt8](repeating: 0xFE, count: 256), e: [1, 0, 1])))
    }
}
