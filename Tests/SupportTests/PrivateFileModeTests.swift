import Foundation
import Support
import XCTest

/// Key folders and secret files are the server's alone whatever the umask: folders 0700 (each
/// one created, not only the last), files 0600.
final class PrivateFileModeTests: XCTestCase {
    private func temporaryRoot() throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("PrivateFileModeTests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: root) }
        return root
    }

    private func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }

    func testFoldersAndFilesAreOwnerOnlyUnderAPermissiveUmask() throws {
        let root = try temporaryRoot()
        let previous = umask(0o022)
        defer { umask(previous) }
        try PrivateDirectory.create(root + "/Keys/ta")
        try ExclusiveFile.create(root + "/Keys/ta/k.pem", "secret\n", durable: false)
        XCTAssertEqual(try mode(root + "/Keys"), 0o700)
        XCTAssertEqual(try mode(root + "/Keys/ta"), 0o700)
        XCTAssertEqual(try mode(root + "/Keys/ta/k.pem"), 0o600)
        XCTAssertEqual(try mode(root), 0o755, "a folder that existed keeps its mode")
        try PrivateDirectory.create(root + "/Keys/ta")  // already there: no error
    }

    func testModesAreExactUnderARestrictiveUmask() throws {
        let root = try temporaryRoot()
        let previous = umask(0o377)
        defer { umask(previous) }
        try PrivateDirectory.create(root + "/a/b")
        try ExclusiveFile.create(root + "/a/b/secret", "x", durable: false)
        XCTAssertEqual(try mode(root + "/a"), 0o700)
        XCTAssertEqual(try mode(root + "/a/b/secret"), 0o600)
    }
}
