import Cryptography
import Support
import XCTest

/// `PrivateKey(p256Scalar:)`: OpenSSL completes the public point from d alone (SEC 2 §2.4.2's
/// generator for d = 1).
final class PrivateKeyScalarTests: XCTestCase {
    func testScalarOneIsTheGenerator() throws {
        let key = try PrivateKey(p256Scalar: [UInt8](repeating: 0, count: 31) + [1])
        guard case .ec(let curve, let x, let y) = key.publicKey.components else { return XCTFail("not EC") }
        XCTAssertEqual(curve, "P-256")
        XCTAssertEqual(Hex.encode(x), "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296")
        XCTAssertEqual(Hex.encode(y), "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5")
        let data = Array("probe".utf8)
        XCTAssertTrue(key.publicKey.verify(signature: try key.sign(data, algorithm: .ES256), data: data, algorithm: .ES256))
    }

    func testRefusesOtherSizesAndZero() {
        XCTAssertThrowsError(try PrivateKey(p256Scalar: [1]))
        XCTAssertThrowsError(try PrivateKey(p256Scalar: [UInt8](repeating: 0, count: 32)))
    }
}
