import Foundation
import Support

/// Tells the server which files changed in a few directories, without costing CPU while nothing
/// happens: on Linux through inotify (a thread blocked in poll(2), woken only by events or by
/// `stop()`), elsewhere by comparing directory listings every `pollInterval`.
///
/// Events are gathered until `debounce` seconds pass without a new one (at most `maxDelay` after
/// the first), so an editor's save or a script rewriting 1,000 files gives one call, not 1,000.
/// The closure gets the paths (`<directory>/<name>`) that changed; a directory's own path means
/// "anything in it may have changed" (inotify queue overflow, directory created or replaced).
/// The closure runs on the watcher's thread, which keeps the watcher alive until `stop()`.
public final class FileWatcher: @unchecked Sendable {
    public enum Mode: Sendable {
        /// inotify where available, else polling.
        case automatic
        /// Directory listings compared every `pollInterval` (the macOS path; tests force it).
        case polling
    }

    public let directories: [String]
    /// Directories where only removals count (see `init`).
    public let removalsOnly: Set<String>
    /// Whether changes are delivered by inotify (false: polling).
    public let usesInotify: Bool
    private let debounce: Double
    private let maxDelay: Double
    private let pollInterval: Double
    private let onChange: @Sendable (Set<String>) -> Void
    private let wake: (read: Int32, write: Int32)
    private let inotify: Int32
    private let finished = DispatchSemaphore(value: 0)
    private let running = Locked(true)

    /// `removalsOnly`: directories (also listed in `directories`) where only entries removed or
    /// renamed away are reported. Meant for `Keys/`: the server itself creates `Keys/<name>` when
    /// it makes an entity's first key, and that must not trigger a reload; a folder deleted by an
    /// operator must.
    public init(directories: [String], removalsOnly: Set<String> = [], debounce: Double = 0.2, maxDelay: Double = 1,
                pollInterval: Double = 1, mode: Mode = .automatic, onChange: @escaping @Sendable (Set<String>) -> Void) throws {
        let trim = { (d: String) in d.count > 1 && d.hasSuffix("/") ? String(d.dropLast()) : d }
        self.directories = directories.map(trim)
        self.removalsOnly = Set(removalsOnly.map(trim))
        self.debounce = debounce
        self.maxDelay = max(debounce, maxDelay)
        self.pollInterval = pollInterval
        self.onChange = onChange
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "pipe failed"]) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        wake = (fds[0], fds[1])
        inotify = mode == .automatic ? InotifyEvents.open() : -1
        usesInotify = inotify >= 0
        // Watches and listings are taken before init returns, so a change made right after
        // construction is seen.
        let watcher = usesInotify ? InotifyEvents(fd: inotify, directories: self.directories, removalsOnly: self.removalsOnly) : nil
        let listings = watcher == nil ? self.directories.map(Self.listing) : []
        let thread = Thread { [self] in
            run(watcher: watcher, listings: listings)
            running.withLock { $0 = false }
            finished.signal()
        }
        thread.name = "trustbed-file-watcher"
        thread.start()
    }

    deinit {
        close(wake.read)
        close(wake.write)
        if inotify >= 0 { close(inotify) }
    }

    /// Whether the watching thread is still alive.
    public var isRunning: Bool { running.current }

    /// Ends the watching thread and waits for it; no callback runs after this returns. Not to
    /// be called from inside the callback (it would wait for itself).
    public func stop() {
        guard isRunning else { return }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        finished.wait()
        finished.signal()  // a second stop() returns at once
    }

    // MARK: The watching thread

    private func run(watcher: InotifyEvents?, listings: [[String: Entry]?]) {
        var watcher = watcher, listings = listings
        var pending = Set<String>()
        var firstEvent = 0.0, lastEvent = 0.0
        var nextPoll = Self.now() + pollInterval
        // Polling sees a burst spread over several listings: wait for a quiet one before calling.
        let debounce = watcher == nil ? max(self.debounce, pollInterval * 1.5) : self.debounce

        while true {
            let now = Self.now()
            var timeout = -1.0
            if !pending.isEmpty { timeout = min(lastEvent + debounce, firstEvent + maxDelay) - now }
            if watcher == nil || watcher!.missing { timeout = timeout < 0 ? nextPoll - now : min(timeout, nextPoll - now) }
            var fds = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            if let watcher { fds.append(pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0)) }
            let ms: Int32 = timeout < 0 ? -1 : Int32(max(0, min(timeout, 3_600)) * 1_000 + 1)
            let ready = poll(&fds, nfds_t(fds.count), ms)
            if ready < 0 && errno != EINTR { return }
            if fds[0].revents != 0 { return }

            var changed = Set<String>()
            if fds.count > 1, fds[1].revents != 0 { changed.formUnion(watcher!.drain()) }
            if Self.now() >= nextPoll {
                nextPoll = Self.now() + pollInterval
                if watcher != nil {
                    changed.formUnion(watcher!.addMissing())
                } else {
                    for (i, dir) in directories.enumerated() {
                        let next = Self.listing(dir)
                        changed.formUnion(Self.difference(listings[i], next, in: dir, removalsOnly: removalsOnly.contains(dir)))
                        listings[i] = next
                    }
                }
            }
            if !changed.isEmpty {
                let t = Self.now()
                if pending.isEmpty { firstEvent = t }
                lastEvent = t
                pending.formUnion(changed)
            }
            if !pending.isEmpty, Self.now() >= min(lastEvent + debounce, firstEvent + maxDelay) {
                onChange(pending)
                pending = []
            }
        }
    }

    private static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    // MARK: Polling

    private struct Entry: Equatable { let size: Int64; let modified: Double; let inode: UInt64 }

    /// Name → (size, mtime, inode) of every entry; nil when the directory cannot be read.
    private static func listing(_ dir: String) -> [String: Entry]? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return nil }
        var out: [String: Entry] = [:]
        for name in names {
            var s = stat()
            guard stat(dir + "/" + name, &s) == 0 else { continue }
            #if canImport(Darwin)
            let m = Double(s.st_mtimespec.tv_sec) + Double(s.st_mtimespec.tv_nsec) / 1e9
            #else
            let m = Double(s.st_mtim.tv_sec) + Double(s.st_mtim.tv_nsec) / 1e9
            #endif
            out[name] = Entry(size: Int64(s.st_size), modified: m, inode: UInt64(s.st_ino))
        }
        return out
    }

    private static func difference(_ old: [String: Entry]?, _ new: [String: Entry]?, in dir: String, removalsOnly: Bool) -> Set<String> {
        guard let old, let new else { return old == nil && new == nil ? [] : [dir] }
        var out = Set<String>()
        for (name, e) in new where !removalsOnly && old[name] != e { out.insert(dir + "/" + name) }
        for name in old.keys where new[name] == nil { out.insert(dir + "/" + name) }
        return out
    }
}
