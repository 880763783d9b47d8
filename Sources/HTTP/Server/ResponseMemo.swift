import CMicroHTTPD
import Synchronization
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
/// a thread remembers the hashes of the URLs it answered lately (a direct-mapped table). A URL
/// asked for once, such as a `fetch` about one of 100,000 leaves, then costs no entry (a
/// prepared MHD response made and freed for nothing, a megabyte of them per thread churned
/// through the heap every thousand requests).
///
/// Each worker thread keeps its own memo with its own copy of every MHD response, so a hit
/// touches no memory another core writes: no lock, no shared reference count. Only `clear()`
/// is shared, as a generation number the threads compare before each lookup. The memo is what
/// keeps the hot federation URLs near the bare libmicrohttpd ceiling: without it they answer
/// markedly fewer requests (docs/performance.md, 2026-11-27).
final class ResponseMemo: @unchecked Sendable {
    /// Hashed once, as bytes: the per-thread table and the table of requests answered once both
    /// use `fieldsHash`, where a `Dictionary` keyed by the five strings would hash them again
    /// for every lookup and insertion, memo hits included. A class, so that handing it on (to
    /// the handler's completion, to `store`) retains one object instead of five strings.
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

    /// What a hit needs: this thread's MHD response (always a 200), and its size for the access log.
    struct Entry {
        let wire: PreparedResponse
        let bytes: Int
        let deadlineNanos: UInt64
    }

    /// One thread's, and only ever used on that thread, so its fields skip the runtime's
    /// exclusivity checks (`@exclusivity(unchecked)`), which no other thread could trip and
    /// which a hit would otherwise pay on every field it reads.
    private final class ThreadMemo {
        @exclusivity(unchecked) var generation: UInt64
        @exclusivity(unchecked) private(set) var entries: [Key: Entry] = [:]
        /// Bytes held by `entries` (bodies and keys), against the memo's byte budget.
        @exclusivity(unchecked) private(set) var bytes = 0
        /// Requests answered and not kept: `Key.fieldsHash` and when, by the hash's low bits (64 KiB).
        @exclusivity(unchecked) private var answered = [(hash: Int, nanos: UInt64)](repeating: (0, 0), count: 4096)
        init(generation: UInt64) { self.generation = generation }

        /// Whether `key`'s URL was answered within the memo's lifetime before `now`; if not, it
        /// is remembered for next time.
        func admit(_ key: Key, now: UInt64) -> Bool {
            let hash = key.fieldsHash
            let slot = hash & (answered.count - 1)
            if answered[slot].hash == hash && now &- answered[slot].nanos < ResponseMemo.lifetimeNanos { return true }
            answered[slot] = (hash, now)
            return false
        }

        /// A cleared memo also forgets what it was asked.
        func reset(generation: UInt64) {
            removeAll()
            for i in answered.indices { answered[i] = (0, 0) }
            self.generation = generation
        }

        func insert(_ entry: Entry, for key: Key) {
            if let replaced = entries.updateValue(entry, forKey: key) { bytes -= Self.size(bodyBytes: replaced.bytes, key) }
            bytes += Self.size(bodyBytes: entry.bytes, key)
        }

        func remove(_ key: Key) {
            if let removed = entries.removeValue(forKey: key) { bytes -= Self.size(bodyBytes: removed.bytes, key) }
        }

        func removeAll() {
            entries.removeAll(keepingCapacity: true)
            bytes = 0
        }

        /// What an entry costs: its body, its key and a fixed allowance for the rest.
        static func size(bodyBytes: Int, _ key: Key) -> Int {
            bodyBytes + key.path.utf8.count + (key.query?.utf8.count ?? 0) + 256
        }
    }

    /// How long an answer is reused at most, whatever its own `until`.
    static let lifetimeNanos: UInt64 = 1_000_000_000
    private let generation = Atomic<UInt64>(0)
    private var threadKey = pthread_key_t()
    /// Bound on the bytes each thread's memo holds. Clients choose query strings, and every
    /// distinct one is an entry with its own copy of the answer; past the budget the memo starts
    /// over, so junk queries cost speed, not memory.
    private let byteBudget: Int

    init(byteBudget: Int = 1 << 20) {
        self.byteBudget = byteBudget
        pthread_key_create(&threadKey) { raw in
            if let raw { Unmanaged<AnyObject>.fromOpaque(raw).release() }
        }
    }

    deinit { pthread_key_delete(threadKey) }

    /// The reusable answer for `key`, if any, and the generation `store` needs: an answer
    /// computed while the memo was cleared must not be kept.
    func lookup(_ key: Key) -> (entry: Entry?, generation: UInt64) {
        let memo = threadMemo()
        guard let entry = memo.entries[key] else { return (nil, memo.generation) }
        guard MonotonicClock.nanoseconds() < entry.deadlineNanos else {
            memo.remove(key)
            return (nil, memo.generation)
        }
        return (entry, memo.generation)
    }

    /// Keeps `response` for identical requests when it is reusable, and returns the MHD
    /// response made for that, so the caller queues it rather than making another.
    @discardableResult
    func store(_ response: HTTPResponse, for key: Key, generation seen: UInt64) -> PreparedResponse? {
        guard response.status == 200, let until = response.reusableUntil else { return nil }
        let memo = threadMemo()
        guard seen == memo.generation, seen == generation.load(ordering: .acquiring) else { return nil }
        // Admission first: a URL answered once (most of them, for fetches about many subjects)
        // costs nothing more.
        let now = MonotonicClock.nanoseconds()
        guard memo.admit(key, now: now) else { return nil }
        let size = ThreadMemo.size(bodyBytes: response.body.count, key)
        let secondsLeft = until &- Int64(time(nil))
        guard size <= byteBudget, secondsLeft > 0, let wire = PreparedResponse(response) else { return nil }
        // Clamped before multiplying: a route's memo without an `until` passes Int64.max.
        let deadline = now &+ min(Self.lifetimeNanos, UInt64(min(secondsLeft, 10)) * 1_000_000_000)
        if memo.bytes + size > byteBudget { memo.removeAll() }
        memo.insert(Entry(wire: wire, bytes: response.body.count, deadlineNanos: deadline), for: key)
        return wire
    }

    func clear() {
        generation.add(1, ordering: .releasing)
    }

    /// This thread's memo, emptied first when `clear()` ran since its last use.
    private func threadMemo() -> ThreadMemo {
        let current = generation.load(ordering: .acquiring)
        if let raw = pthread_getspecific(threadKey) {
            let memo = Unmanaged<ThreadMemo>.fromOpaque(raw).takeUnretainedValue()
            if memo.generation != current { memo.reset(generation: current) }
            return memo
        }
        let memo = ThreadMemo(generation: current)
        pthread_setspecific(threadKey, Unmanaged.passRetained(memo).toOpaque())
        return memo
    }
}
