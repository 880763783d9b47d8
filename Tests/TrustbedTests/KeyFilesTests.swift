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

    func testActivePointerIsReadWithoutSurroundingWhitespace() throws {
        let files = KeyFiles(root: root, name: "e")
        XCTAssertNil(files.activeKid())
        try KeyFiles.ensureDirectory(files.directory)
        for (text, kid) in [("abc\n", "abc"), ("  abc \r\n\n", "abc"), ("\tabc", "abc"), ("\n \n", nil), ("", nil)] as [(String, String?)] {
            try? FileManager.default.removeItem(atPath: files.activePointer)
            try text.write(toFile: files.activePointer, atomically: false, encoding: .utf8)
            XCTAssertEqual(files.activeKid(), kid, "\(text.debugDescription)")
        }
    }
}
