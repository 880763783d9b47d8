import Cryptography
import Foundation
import XCTest

final class KeyFolderTests: XCTestCase {
    private func temporaryFolder() -> String {
        let path = NSTemporaryDirectory() + "keyfolder-\(UUID().uuidString)"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path + "/nested/issuer"
    }

    private func mode(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    func testFolderAndFilesArePrivateWhateverTheUmask() throws {
        let old = umask(0o022)
        defer { umask(old) }
        let folder = KeyFolder(temporaryFolder())
        _ = try folder.text("secret") { "s\n" }
        XCTAssertEqual(mode(folder.path), 0o700)
        XCTAssertEqual(mode((folder.path as NSString).deletingLastPathComponent), 0o700)
        XCTAssertEqual(mode(folder.file("secret")), 0o600)
    }

    func testTextIsMadeOnceAndNeverOverwritten() throws {
        let folder = KeyFolder(temporaryFolder())
        XCTAssertEqual(try folder.text("a") { "first" }, "first")
        XCTAssertEqual(try folder.text("a") { XCTFail("made again"); return "second" }, "first")
        XCTAssertThrowsError(try folder.create("a", "third"))
        XCTAssertEqual(folder.read("a"), "first")
    }

    func testReplaceSwapsTheWholeFileAndLeavesNothingAside() throws {
        let folder = KeyFolder(temporaryFolder())
        try folder.create("cert.pem", "old")
        try folder.replace("cert.pem", "new")
        XCTAssertEqual(folder.read("cert.pem"), "new")
        XCTAssertEqual(mode(folder.file("cert.pem")), 0o600)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["cert.pem"])
    }

    func testKeysAndCertificatesRoundTripThroughTheFolder() throws {
        let folder = KeyFolder(temporaryFolder())
        let key = try folder.privateKey("k.pem") { try PrivateKey(generatingFor: .ES256) }
        let again = try folder.privateKey("k.pem") { XCTFail("made again"); return try PrivateKey(generatingFor: .ES256) }
        XCTAssertEqual(key.publicKey, again.publicKey)
    }
}
