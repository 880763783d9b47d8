import Foundation
@testable import Store
import XCTest

/// The database and its -wal and -shm files are the server's alone (mode 0600) whatever the umask
/// of the shell that started it.
final class DatabaseFileModeTests: XCTestCase {
    private func withUmask<T>(_ mask: mode_t, _ body: () throws -> T) rethrows -> T {
        let previous = umask(mask)
        defer { umask(previous) }
        return try body()
    }

    private func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }

    func testNewDatabaseFilesAreOwnerOnlyUnderAPermissiveUmask() throws {
        let path = try temporaryDatabasePath()
        let database = try withUmask(0o022) { try Database(path: path, durability: .processCrash) }
        try database.execute("CREATE TABLE t (v TEXT)")
        try database.execute("INSERT INTO t VALUES ('x')")
        for file in [path, path + "-wal", path + "-shm"] {
            XCTAssertEqual(try mode(file), 0o600, file)
        }
        database.close()
    }

    /// A umask that takes the owner's write bit still leaves a file the server can write.
    func testModeIsExactUnderARestrictiveUmask() throws {
        let path = try temporaryDatabasePath()
        let database = try withUmask(0o277) { try Database(path: path) }
        XCTAssertEqual(try mode(path), 0o600)
        database.close()
    }

    /// An existing file keeps the mode its operator gave it.
    func testExistingFileKeepsItsMode() throws {
        let path = try temporaryDatabasePath()
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o640]))
        let database = try Database(path: path)
        XCTAssertEqual(try mode(path), 0o640)
        database.close()
    }
}
