import Foundation
import XCTest
import Support
@testable import Trustbed

final class FileWatcherTests: XCTestCase {
    private func temporaryDirectory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("watch-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Collects callbacks and lets the test wait for the next one.
    private final class Changes: @unchecked Sendable {
        let calls = Locked<[Set<String>]>([])
        let signal = DispatchSemaphore(value: 0)
        func record(_ s: Set<String>) { calls.withLock { $0.append(s) }; signal.signal() }
        func next(within seconds: Double) -> Set<String>? {
            guard signal.wait(timeout: .now() + seconds) == .success else { return nil }
            return calls.current.last
        }
    }

    private func exercise(mode: FileWatcher.Mode, within seconds: Double) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let changes = Changes()
        let watcher = try FileWatcher(directories: [dir], debounce: 0.1, pollInterval: 0.2, mode: mode) { changes.record($0) }
        if mode == .automatic { XCTAssertTrue(watcher.usesInotify, "Linux has inotify") }
        Thread.sleep(forTimeInterval: 0.05)

        // Write: a new file.
        try "{}".write(toFile: "\(dir)/a.json", atomically: false, encoding: .utf8)
        XCTAssertEqual(changes.next(within: seconds), ["\(dir)/a.json"])
        // Rename over another name (an editor's save), then delete.
        try "{ }".write(toFile: "\(dir)/b.tmp", atomically: false, encoding: .utf8)
        XCTAssertEqual(rename("\(dir)/b.tmp", "\(dir)/b.json"), 0)
        let renamed = try XCTUnwrap(changes.next(within: seconds))
        XCTAssertTrue(renamed.contains("\(dir)/b.json"), "\(renamed)")
        try FileManager.default.removeItem(atPath: "\(dir)/a.json")
        XCTAssertEqual(changes.next(within: seconds), ["\(dir)/a.json"])

        // A burst is one call.
        let before = changes.calls.current.count
        for i in 0 ..< 50 { try "{}".write(toFile: "\(dir)/burst-\(i).json", atomically: false, encoding: .utf8) }
        let burst = try XCTUnwrap(changes.next(within: seconds))
        XCTAssertEqual(burst.count, 50)
        XCTAssertEqual(changes.calls.current.count, before + 1)

        watcher.stop()
        XCTAssertFalse(watcher.isRunning, "stop() ends the thread")
        try "{}".write(toFile: "\(dir)/after.json", atomically: false, encoding: .utf8)
        XCTAssertNil(changes.next(within: 0.4), "no callback after stop()")
        watcher.stop()
    }

    func testInotifyReportsWriteRenameDeleteWithinASecond() throws {
        try exercise(mode: .automatic, within: 1)
    }

    func testPollingFallbackReportsChanges() throws {
        try exercise(mode: .polling, within: 1)
    }

    func testIdleWatcherDoesNotWakeUp() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let watcher = try FileWatcher(directories: [dir]) { _ in }
        defer { watcher.stop() }
        let before = clock()
        Thread.sleep(forTimeInterval: 0.5)
        // CPU time of the whole process; an idle inotify watcher sleeps in poll(2).
        XCTAssertLessThan(Double(clock() - before) / Double(CLOCKS_PER_SEC), 0.05)
    }

    func testDirectoryCreatedLaterIsWatched() throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let dir = parent + "/Keys"
        let changes = Changes()
        let watcher = try FileWatcher(directories: [dir], debounce: 0.05, pollInterval: 0.1) { changes.record($0) }
        defer { watcher.stop() }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        XCTAssertEqual(changes.next(within: 1), [dir])
        try FileManager.default.createDirectory(atPath: dir + "/new-entity", withIntermediateDirectories: false)
        XCTAssertEqual(changes.next(within: 1), [dir + "/new-entity"])
    }

    func testRemovalsOnlyDirectoryIgnoresCreations() throws {
        for mode in [FileWatcher.Mode.automatic, .polling] {
            let dir = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            try FileManager.default.createDirectory(atPath: dir + "/old", withIntermediateDirectories: false)
            let changes = Changes()
            let watcher = try FileWatcher(directories: [dir], removalsOnly: [dir], debounce: 0.05, pollInterval: 0.1, mode: mode) {
                changes.record($0)
            }
            defer { watcher.stop() }
            try FileManager.default.createDirectory(atPath: dir + "/new", withIntermediateDirectories: false)
            XCTAssertNil(changes.next(within: 0.4), "\(mode): a folder the server creates itself is not a change")
            try FileManager.default.removeItem(atPath: dir + "/old")
            XCTAssertEqual(changes.next(within: 1), [dir + "/old"], "\(mode)")
        }
    }
}
