#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The inotify side of `FileWatcher`: one non-recursive watch per directory, for the events
/// that mean a file's content or presence changed. A file written in place gives
/// IN_CLOSE_WRITE; an editor's or `rename`'s replace gives IN_MOVED_TO; removal IN_DELETE or
/// IN_MOVED_FROM. Watches are not recursive: changes inside `Keys/<name>/` are announced by the
/// CLI through the database's change counter, so only entity folders appearing or going matter.
struct InotifyEvents {
    let fd: Int32
    private let directories: [String]
    private let removalsOnly: Set<String>
    private var byWatch: [Int32: String] = [:]

    /// True while some directory could not be watched (it does not exist yet); `addMissing()`
    /// retries, driven by the watcher's poll interval.
    var missing: Bool { byWatch.count < directories.count }

    #if os(Linux)
    private static let mask = UInt32(IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE
                                     | IN_DELETE_SELF | IN_MOVE_SELF)
    private static let removalMask = UInt32(IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF)

    /// A non-blocking inotify descriptor, or -1 (then the watcher polls).
    static func open() -> Int32 {
        inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    }

    init(fd: Int32, directories: [String], removalsOnly: Set<String>) {
        self.fd = fd
        self.directories = directories
        self.removalsOnly = removalsOnly
        _ = addMissing()
    }

    /// Adds watches for directories that have none; returns those added (their content is new to us).
    mutating func addMissing() -> Set<String> {
        var added = Set<String>()
        for dir in directories where !byWatch.values.contains(dir) {
            let wd = inotify_add_watch(fd, dir, removalsOnly.contains(dir) ? Self.removalMask : Self.mask)
            if wd >= 0 {
                byWatch[wd] = dir
                added.insert(dir)
            }
        }
        return added
    }

    /// Reads every queued event; returns the paths they name.
    mutating func drain() -> Set<String> {
        var changed = Set<String>()
        // Aligned for inotify_event; room for many events per read.
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer, capacity)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= n {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameBytes = Int(event.len)
                let dir = byWatch[event.wd]
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    // Events were lost: everything watched may have changed.
                    changed.formUnion(directories)
                } else if let dir {
                    if event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 {
                        // The directory itself went away; watch it again when it is back.
                        byWatch[event.wd] = nil
                        changed.insert(dir)
                    } else if nameBytes > 0 {
                        let name = String(cString: (buffer + offset + header).assumingMemoryBound(to: CChar.self))
                        changed.insert(dir + "/" + name)
                    } else {
                        changed.insert(dir)
                    }
                }
                offset += header + nameBytes
            }
        }
        return changed
    }
    #else
    static func open() -> Int32 { -1 }
    init(fd: Int32, directories: [String], removalsOnly: Set<String>) {
        self.fd = fd; self.directories = directories; self.removalsOnly = removalsOnly
    }
    mutating func addMissing() -> Set<String> { [] }
    mutating func drain() -> Set<String> { [] }
    #endif
}
