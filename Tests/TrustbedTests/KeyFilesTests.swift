import Foundation
import XCTest
import Cryptography
import Federation
import JOSE
@testable import Trustbed

/// Reading `Keys/<name>/` on a key load: the `active` pointer and the PEM with plain POSIX reads,
/// and the public JWK built once with the key.
final class KeyFilesTests: XCTestCase {
    private var root = ""

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("keyfiles-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: root) }

    func testLoadedKeyCarriesItsPublicJWK() throws {
        let files = KeyFiles(root: root, name: "leaf")
        let made = try files.loadOrCreate(algorithm: .ES256)
        let loaded = try files.load(kid: made.kid)
        let expected = JWK(publicKey: loaded.privateKey.publicKey, algorithm: .ES256)
        XCTAssertEqual(loaded.kid, made.kid)
        XCTAssertEqual(loaded.kid, expected.thumbprint())
        XCTAssertEqual(loaded.publicJWK, expected)
        XCTAssertEqual(made.publicJWK, expected)
        XCTAssertEqual(KeyManager.publicJWK(loaded), expected)
        XCTAssertThrowsError(try files.load(kid: "missing"))
    }

    /// The JWK built from the private key's own numbers (no public EVP_PKEY) is the one the
    /// public key gives, for every algorithm an entity may sign with, also after a PEM round
    /// trip; the public key, built on first use, agrees with it.
    func testPublicJWKFromThePrivateKeyMatchesThePublicKey() throws {
        for alg in EntityFile.signingAlgorithms {
            let generated = try PrivateKey(generatingFor: alg)
            let loaded = try PrivateKey(pem: try generated.pemPKCS8())
            for key in [generated, loaded] {
                let jwk = JWK(components: key.publicComponents, algorithm: alg)
                XCTAssertEqual(jwk, JWK(publicKey: key.publicKey, algorithm: alg), "\(alg)")
                XCTAssertEqual(key.publicKey.components, key.publicComponents, "\(alg)")
                XCTAssertTrue(key.fits(alg))
                XCTAssertEqual(jwk.kid, jwk.thumbprint())
                // The JWK verifies what the key signs.
                let signature = try key.sign(Array("data".utf8), algorithm: alg)
                XCTAssertTrue(try jwk.publicKey().verify(signature: signature, data: Array("data".utf8), algorithm: alg), "\(alg)")
            }
            XCTAssertEqual(generated.publicComponents, loaded.publicComponents)
        }
    }

    /// The public key is built once, also when many threads ask for it first together.
    func testPublicKeyIsBuiltOnceUnderConcurrentFirstUse() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let seen = EntityDirectory.parallelMap(64) { _ in ObjectIdentifier(key.publicKey) }
        XCTAssertEqual(Set(seen).count, 1)
    }

    func testActivePointerIsReadWithoutSurroundingWhitespace() throws {
        let files = KeyFiles(root: root, name: "e")
        XCTAssertNil(files.activeKid())
        try files.folder.ensure()
        for (text, kid) in [("abc\n", "abc"), ("  abc \r\n\n", "abc"), ("\tabc", "abc"), ("\n \n", nil), ("", nil)] as [(String, String?)] {
            try? FileManager.default.removeItem(atPath: files.activePointer)
            try text.write(toFile: files.activePointer, atomically: false, encoding: .utf8)
            XCTAssertEqual(files.activeKid(), kid, "\(text.debugDescription)")
        }
    }
}
