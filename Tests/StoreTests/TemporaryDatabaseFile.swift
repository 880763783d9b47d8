import CSQLite
import Foundation
@testable import Store
import XCTest

extension XCTestCase {
    /// A fresh database path in its own temporary directory, removed (with its -wal and -shm
    /// companions) when the test ends.
    func temporaryDatabasePath(_ name: String = "store.sqlite") throws -> String {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("StoreTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        return directory.appendingPathComponent(name).path
    }

    /// A temporary database file as an earlier version of the schema left it: migration steps
    /// 1 to `version` run on a raw connection (not through `Database`, which would migrate it
    /// on), `user_version` set to `version`, then `rows` (the SQL that fills it). For the
    /// upgrade tests of later steps.
    func databaseAtSchemaVersion(_ version: Int, rows: [String]) throws -> String {
        let path = try temporaryDatabasePath()
        var handle: OpaquePointer?
        XCTAssertEqual(sqlite3_open(path, &handle), SQLITE_OK)
        defer { sqlite3_close(handle) }
        let statements = Migrations.steps[..<version].flatMap { $0 } + ["PRAGMA user_version = \(version)"] + rows
        for sql in statements {
            XCTAssertEqual(sqlite3_exec(handle, sql, nil, nil, nil), SQLITE_OK, sql)
        }
        return path
    }
}
