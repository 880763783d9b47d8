#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `Site`'s index of mount URLs: (origin, path) → mount, for longest-prefix lookups that
/// cost the same for 10 or 100,000 mounts.
///
/// An open-addressing table of mount indexes over the mounts' own URL strings, instead of a
/// dictionary per origin keyed by path `Substring`s: the two dictionaries (by origin, and again
/// for the mounts under the base URL) took 40 bytes a bucket, this takes 32 bytes an entry and
/// 4 a slot (at 100,000 mounts: see docs/performance.md). A lookup hashes the origin's number
/// and the path's bytes once and compares bytes in place, so it builds no string.
struct MountTable: Sendable {
    /// A mount URL: its origin (an index into the site's origins) and where its path lies in
    /// the URL's UTF-8 bytes (without trailing slashes; empty for the origin itself).
    private struct Entry: Sendable {
        let url: String
        let origin: Int32
        let pathStart: Int32
        let pathEnd: Int32
    }

    private var entries: [Entry] = []
    /// Mount numbers (indexes into `entries`, which are the site's mount indexes), -1 for none.
    /// At most half full, so a lookup probes one or two slots.
    private var slots: [Int32]
    private let mask: Int

    init(capacity: Int) {
        var size = 8
        while size < capacity * 2 { size <<= 1 }
        slots = Array(repeating: -1, count: size)
        mask = size - 1
        entries.reserveCapacity(capacity)
    }

    /// Adds the mount numbered `entries.count` (call in mount order). `path` is a range of
    /// `url`'s UTF-8 offsets. When a mount with the same origin and path is already there, the
    /// first one stays found (this one only takes its number).
    mutating func append(url: String, origin: Int32, path: Range<Int>) {
        let entry = Entry(url: url, origin: origin, pathStart: Int32(path.lowerBound), pathEnd: Int32(path.upperBound))
        let number = Int32(entries.count)
        entries.append(entry)
        let found = Self.withBytes(url) { bytes in
            find(origin: origin, path: UnsafeBufferPointer(rebasing: bytes[path]))
        }
        guard found == nil else { return }
        var slot = Self.hash(origin: origin, url: url, path: path) & mask
        while slots[slot] >= 0 { slot = (slot + 1) & mask }
        slots[slot] = number
    }

    /// The mount with exactly this origin and path.
    func find(origin: Int32, path: UnsafeBufferPointer<UInt8>) -> Int? {
        var slot = Self.hash(origin: origin, path: path) & mask
        while true {
            let number = slots[slot]
            if number < 0 { return nil }
            let e = entries[Int(number)]
            if e.origin == origin && Int(e.pathEnd - e.pathStart) == path.count
                && Self.withBytes(e.url, { Self.equal(UnsafeBufferPointer(rebasing: $0[Int(e.pathStart)..<Int(e.pathEnd)]), path) }) {
                return Int(number)
            }
            slot = (slot + 1) & mask
        }
    }

    /// Whether the path of mount `number` starts with `prefix`.
    func pathHasPrefix(_ number: Int, _ prefix: UnsafeBufferPointer<UInt8>) -> Bool {
        let e = entries[number]
        guard Int(e.pathEnd - e.pathStart) >= prefix.count else { return false }
        return Self.withBytes(e.url) { Self.equal(UnsafeBufferPointer(rebasing: $0[Int(e.pathStart)..<(Int(e.pathStart) + prefix.count)]), prefix) }
    }

    private static func hash(origin: Int32, url: String, path: Range<Int>) -> Int {
        withBytes(url) { hash(origin: origin, path: UnsafeBufferPointer(rebasing: $0[path])) }
    }

    private static func hash(origin: Int32, path: UnsafeBufferPointer<UInt8>) -> Int {
        var hasher = Hasher()
        hasher.combine(origin)
        hasher.combine(bytes: UnsafeRawBufferPointer(path))
        return hasher.finalize()
    }

    private static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
    }

    /// The string's UTF-8 bytes in place (native and small strings), or a copy.
    static func withBytes<T>(_ string: String, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(string.utf8).withUnsafeBufferPointer(body)
    }

}

/// The origins of a `Site`'s mounts ("scheme://authority", lower-cased), numbered in the order
/// added, found without building a string: a request's origin is lower-cased into a stack
/// buffer and compared as bytes. A dictionary keyed by the two lower-cased strings makes two
/// strings and hashes them on every request.
struct OriginTable: Sendable {
    private var names: [String] = []
    private var slots = [Int32](repeating: -1, count: 8)

    /// The number of the origin, added if new.
    mutating func number(scheme: String, authority: String) -> Int32 {
        if let found = find(scheme: scheme, authority: authority) { return found }
        let name = ASCII.lowercased(scheme) + "://" + ASCII.lowercased(authority)
        let number = Int32(names.count)
        names.append(name)
        if names.count * 2 > slots.count {
            slots = [Int32](repeating: -1, count: slots.count * 2)
            for (i, name) in names.enumerated() { place(Int32(i), MountTable.withBytes(name) { Self.hash($0) }) }
        } else {
            place(number, MountTable.withBytes(name) { Self.hash($0) })
        }
        return number
    }

    /// The number of the origin `scheme://authority`, compared ignoring case; nil when unknown.
    func find(scheme: String, authority: String) -> Int32? {
        MountTable.withBytes(scheme) { scheme in MountTable.withBytes(authority) { find(scheme: scheme, authority: $0) } }
    }

    private func find(scheme: UnsafeBufferPointer<UInt8>, authority: UnsafeBufferPointer<UInt8>) -> Int32? {
        let count = scheme.count + 3 + authority.count
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { buffer -> Int32? in
            var n = 0
            for i in 0..<scheme.count { buffer[n + i] = ASCII.lower(scheme[i]) }
            n += scheme.count
            for byte in "://".utf8 { buffer[n] = byte; n += 1 }
            for i in 0..<authority.count { buffer[n + i] = ASCII.lower(authority[i]) }
            n += authority.count
            let name = UnsafeBufferPointer(rebasing: buffer[..<n])
            let mask = slots.count - 1
            var slot = Self.hash(name) & mask
            while true {
                let number = slots[slot]
                if number < 0 { return nil }
                if MountTable.withBytes(names[Int(number)], { $0.count == name.count && memcmp($0.baseAddress!, name.baseAddress!, n) == 0 }) {
                    return number
                }
                slot = (slot + 1) & mask
            }
        }
    }

    private mutating func place(_ number: Int32, _ hash: Int) {
        let mask = slots.count - 1
        var slot = hash & mask
        while slots[slot] >= 0 { slot = (slot + 1) & mask }
        slots[slot] = number
    }

    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        return hasher.finalize()
    }
}
