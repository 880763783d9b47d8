import Foundation
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
}
