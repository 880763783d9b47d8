import Cryptography
import XCTest

final class PEMTests: XCTestCase {
    func testPrivateKeyPKCS8RoundTrip() throws {
        for algorithm in SignatureAlgorithm.allCases {
            let key = try PrivateKey(generatingFor: algorithm)
            let pem = try key.pemPKCS8()
            XCTAssertTrue(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"), "\(algorithm)")
            let restored = try PrivateKey(pem: pem)
            XCTAssertEqual(restored.publicKey.components, key.publicKey.components, "\(algorithm)")
            XCTAssertEqual(try restored.pemPKCS8(), pem)
            let data = Array("x".utf8)
            let signature = try restored.sign(data, algorithm: algorithm)
            XCTAssertTrue(key.publicKey.verify(signature: signature, data: data, algorithm: algorithm))
        }
    }

    func testPublicKeyPEMRoundTrip() throws {
        for algorithm in SignatureAlgorithm.allCases {
            let key = try PrivateKey(generatingFor: algorithm)
            let pem = try key.publicKey.pem()
            XCTAssertTrue(pem.hasPrefix("-----BEGIN PUBLIC KEY-----"))
            let restored = try PublicKey(pem: pem)
            XCTAssertEqual(restored.components, key.publicKey.components)
            XCTAssertEqual(try restored.pem(), pem)
        }
    }

    func testTraditionalECPrivateKeyIsAccepted() throws {
        let key = try PrivateKey(pem: PEMFixtures.traditionalEC)
        guard case .ec(let curve, let x, let y) = key.publicKey.components else { return XCTFail("not EC") }
        XCTAssertEqual(curve, "P-256")
        XCTAssertEqual(x.count, 32)
        XCTAssertEqual(y.count, 32)
        XCTAssertTrue(try key.pemPKCS8().hasPrefix("-----BEGIN PRIVATE KEY-----"))
    }

    func testBadPEMIsRefused() throws {
        let valid = try PrivateKey(generatingFor: .ES256)
        XCTAssertThrowsError(try PrivateKey(pem: "")) { XCTAssertEqual($0 as? CryptoError, .invalidPEM) }
        XCTAssertThrowsError(try PrivateKey(pem: "not a key")) { XCTAssertEqual($0 as? CryptoError, .invalidPEM) }
        // Encrypted keys fail at once instead of prompting for a passphrase.
        XCTAssertThrowsError(try PrivateKey(pem: PEMFixtures.encryptedPKCS8)) { XCTAssertEqual($0 as? CryptoError, .invalidPEM) }
        // A public key is not a private key, and the reverse.
        XCTAssertThrowsError(try PrivateKey(pem: try valid.publicKey.pem())) { XCTAssertEqual($0 as? CryptoError, .invalidPEM) }
        XCTAssertThrowsError(try PublicKey(pem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"))
    }

    func testUnsupportedKeyTypesAreRefused() {
        XCTAssertThrowsError(try PublicKey(pem: PEMFixtures.ed448Public)) {
            XCTAssertEqual($0 as? CryptoError, .invalidKey("unsupported key type"))
        }
        XCTAssertThrowsError(try PublicKey(pem: PEMFixtures.secp256k1Public)) {
            guard case .invalidKey = $0 as? CryptoError else { return XCTFail("\($0)") }
        }
    }
}
