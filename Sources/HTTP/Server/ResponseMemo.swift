import Support
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A micro-cache of answers marked reusable (`HTTPResponse.reusable(until:)`, which a `Router`
/// keeps only on routes declared `memo: true`): an identical GET or HEAD within a second gets
/// the same answer without the request being built, routed or handled again. Requests with
/// `Authorization`, `DPoP` or `Cookie` neither read nor fill it: their answers may be meant for
/// that client alone. It is what makes a cached statement cost little more than a static
/// file; the handler's own cache still decides what the answer is.
///
/// "Identical" means the same path, raw query and the headers that choose the entity (`Host`,
/// `X-Forwarded-Host`, `X-Forwarded-Proto`); no other request header changes a reusable answer.
/// The application clears the memo whenever what it serves changes (`HTTPServer.clearMemo()`).
///
/// An answer is kept from the second time its URL is answered within a second, not the first:
/// the memo remembers the hashes of the URLs it answered lately (a direct-mapped table). A URL
/// asked for once, such as a `fetch` about one of 100,000 leaves, then costs no entry (a
/// prepared MHD response made and freed for nothing).
///
/// One memo for all worker threads, under the project's read-write lock: hits only read it.
/// A per-thread memo (a copy of every MHD response per thread, no lock) measured within noise
/// of this (docs/performance.md, issue 18), so the simpler design stays. The memo itself keeps
/// the hot federation URLs near the bare libmicrohttpd ceiling (docs/performance.md, 2026-11-27).
///
/// Lifetime of an entry's MHD response: a hit copies the entry (retaining its
/// `PreparedResponse`) under the lock and queues it after letting go; `MHD_queue_response`
/// takes MHD's own reference. An entry removed from the table (clear, expiry, replacement, the
/// byte budget) is released outside the lock, and its `MHD_destroy_response` runs when the last
/// holder lets go: the table or a hit between its lookup and its queueing, whichever is later.
/// MHD frees the response once the connections it was queued on are done with it.
final class ResponseMemo: Sendable {
    /// Hashed once, as bytes: the table and the table of requests answered once both use
    /// `fieldsHash`, where a `Dictionary` keyed by the five strings would hash them again for
    /// every lookup and insertion, memo hits included. A class, so that handing it on (to the
    /// handler's completion, to `store`) retains one object instead of five strings.
    final class Key: Hashable, Sendable {
        let path: String
        let query: String?
        let routing: RoutingHeaders
        let fieldsHash: Int

        init(path: String, query: String?, routing: RoutingHeaders) {
            self.path = path
            self.query = query
            self.routing = routing
            var hasher = Hasher()
            Self.add(path, to: &hasher)
            Self.add(query, to: &hasher)
            Self.add(routing.host, to: &hasher)
            Self.add(routing.forwardedHost, to: &hasher)
            Self.add(routing.forwardedProto, to: &hasher)
            fieldsHash = hasher.finalize()
        }

        /// A field's bytes, then a byte no header or path contains (0xFF for an absent one). The
        /// hasher is passed inout rather than captured by a local function: captured, every
        /// call pays a dynamic exclusivity check (swift_beginAccess).
        private static func add(_ field: String?, to hasher: inout Hasher) {
            if let field { MountTable.withBytes(field) { hasher.combine(bytes: UnsafeRawBufferPointer($0)) } }
            hasher.combine(field == nil ? UInt8(0xFF) : 0)
        }

        func hash(into hasher: inout Hasher) { hasher.combine(fieldsHash) }

        static func == (a: Key, b: Key) -> Bool {
            a.fieldsHash == b.fieldsHash && a.path == b.path && a.query == b.query && a.routing == b.routing
        }
    }

    /// What a hit needs: the MHD response (always a 200), and its size for the access log.
    struct Entry: Sendable {
        let wire: PreparedResponse
        let bytes: Int
        let deadlineNanos: UInt64
    }

    /// Everything the lock guards.
    private struct Table {
        /// Incremented by `clear()`: an answer computed before a clear must not be kept after it.
        var generation: UInt64 = 0
        var entries: [Key: Entry] = [:]
        /// Bytes held by `entries` (bodies and keys), against the byte budget.
        var bytes = 0
        /// Requests answered and not kept: `Key.fieldsHash` and when, by the hash's low bits (64 KiB).
        var answered = [(hash: Int, nanos: UInt64)](repeating: (0, 0), count: 4096)

        /// Whether `key`'s URL was answered within the memo's lifetime before `now`; if not, it
        /// is remembered for next time.
        mutating func admit(_ key: Key, now: UInt64) -> Bool {
            let hash = key.fieldsHash
            let slot = hash & (answered.count - 1)
            if answered[slot].hash == hash && now &- answered[slot].nanos < ResponseMemo.lifetimeNanos { return true }
            answered[slot] = (hash, now)
            return false
        }

        /// Returns what it replaced, for the caller to release after the lock.
        mutating func insert(_ entry: Entry, for key: Key) -> Entry? {
            let replaced = entries.updateValue(entry, forKey: key)
            if let replaced { bytes -= Self.size(bodyBytes: replaced.bytes, key) }
            bytes += Self.size(bodyBytes: entry.bytes, key)
            return replaced
        }

        /// Empties the table and returns the old entries, for the caller to release after the lock.
        mutating func takeAll() -> [Key: Entry] {
            let old = entries
            entries = [:]
            bytes = 0
            return old
        }

        /// What an entry costs: its body, its key and a fixed allowance for the rest. The
        /// allowance also bounds the number of entries (budget / 256).
        static func size(bodyBytes: Int, _ key: Key) -> Int {
            bodyBytes + key.path.utf8.count + (key.query?.utf8.count ?? 0) + 256
        }
    }

    /// How long an answer is reused at most, whatever its own `until`.
    static let lifetimeNanos: UInt64 = 1_000_000_000
    private let table = Locked(Table())
    /// Bound on the bytes the memo holds. Clients choose query strings, and every distinct one
    /// is an entry with its own answer; past the budget the memo starts over, so junk queries
    /// cost speed, not memory.
    private let byteBudget: Int

    init(byteBudget: Int = 4 << 20) {
        self.byteBudget = byteBudget
    }

    /// The reusable answer for `key`, if any, and the generation `store` needs: an answer
    /// computed while the memo was cleared must not be kept.
    func lookup(_ key: Key) -> (entry: Entry?, generation: UInt64) {
        let (entry, generation) = table.read { ($0.entries[key], $0.generation) }
        guard let entry else { return (nil, generation) }
        guard MonotonicClock.nanoseconds() < entry.deadlineNanos else {
            // Dropped now rather than left for the budget, unless another thread has stored a
            // fresh answer since. Returned out of the closure, so released after the lock.
            _ = table.withLock { table -> Entry? in
                guard let current = table.entries[key], current.wire === entry.wire else { return nil }
                table.bytes -= Table.size(bodyBytes: current.bytes, key)
                return table.entries.removeValue(forKey: key)
            }
            return (nil, generation)
        }
        return (entry, generation)
    }

    /// Keeps `response` for identical requests when it is reusable, and returns the MHD
    /// response made for that, so the caller queues it rather than making another (also when a
    /// `clear()` in between kept it out of the table).
    @discardableResult
    func store(_ response: HTTPResponse, for key: Key, generation seen: UInt64) -> PreparedResponse? {
        guard response.status == 200, let until = response.reusableUntil else { return nil }
        let size = Table.size(bodyBytes: response.body.count, key)
        let secondsLeft = until &- Int64(time(nil))
        guard size <= byteBudget, secondsLeft > 0 else { return nil }
        // Admission first: a URL answered once (most of them, for fetches about many subjects)
        // costs nothing more.
        let now = MonotonicClock.nanoseconds()
        guard table.withLock({ $0.generation == seen && $0.admit(key, now: now) }) else { return nil }
        // Made outside the lock: it copies the body and a header at a time.
        guard let wire = PreparedResponse(response) else { return nil }
        // Clamped before multiplying: a route's memo without an `until` passes Int64.max.
        let deadline = now &+ min(Self.lifetimeNanos, UInt64(min(secondsLeft, 10)) * 1_000_000_000)
        let entry = Entry(wire: wire, bytes: response.body.count, deadlineNanos: deadline)
        // What leaves the table is returned out of the closure, so its MHD responses are
        // destroyed after the lock (by whichever of the caller and the hits still holding one
        // lets go last).
        _ = table.withLock { table -> (old: [Key: Entry], replaced: Entry?) in
            guard table.generation == seen else { return ([:], nil) }
            let old = table.bytes + size > byteBudget ? table.takeAll() : [:]
            return (old, table.insert(entry, for: key))
        }
        return wire
    }

    /// Forgets every answer and every request answered once.
    func clear() {
        // Returned out of the closure, so released after the lock.
        _ = table.withLock { table -> [Key: Entry] in
            table.generation &+= 1
            for i in table.answered.indices { table.answered[i] = (0, 0) }
            return table.takeAll()
        }
    }
}
