import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A micro-cache of answers a handler marked reusable (`HTTPResponse.reusable(until:)`): an
/// identical GET or HEAD within a second gets the same prepared answer without the request
/// being built, routed or handled again. It is what makes a cached statement cost little more
/// than a static file; the handler's own cache still decides what the answer is.
///
/// "Identical" means the same path, raw query and the headers that choose the entity (`Host`,
/// `X-Forwarded-Host`, `X-Forwarded-Proto`); no other request header changes a reusable answer.
/// The application clears the memo whenever what it serves changes (`HTTPServer.clearMemo()`).
final class ResponseMemo: @unchecked Sendable {
    struct Key: Hashable {
        let path: String
        let query: String?
        let host: String?
        let forwardedHost: String?
        let forwardedProto: String?

        init(path: String, query: String?, connection: OpaquePointer) {
            self.path = path
            self.query = query
            host = Self.header(connection, "Host")
            forwardedHost = Self.header(connection, "X-Forwarded-Host")
            forwardedProto = Self.header(connection, "X-Forwarded-Proto")
        }

        private static func header(_ connection: OpaquePointer, _ name: StaticString) -> String? {
            name.withUTF8Buffer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { trustbed_mhd_request_header(connection, $0.baseAddress!) }
            }.map { String(cString: $0) }
        }
    }

    private struct Entry {
        let response: HTTPResponse
        let deadlineNanos: UInt64
        let until: Int64
    }

    /// How long an answer is reused at most, whatever its own `until`.
    static let lifetimeNanos: UInt64 = 1_000_000_000
    private let lock = ReadWriteLock()
    private var entries: [Key: Entry] = [:]
    private var generation: UInt64 = 0
    /// Bound on entries so query strings chosen by clients cannot grow memory without limit.
    private let capacity: Int

    init(capacity: Int = 1024) { self.capacity = capacity }

    /// The reusable answer for `key`, if any, and the memo's generation, which `store` needs:
    /// an answer computed while the memo was cleared must not be kept.
    func lookup(_ key: Key) -> (response: HTTPResponse?, generation: UInt64) {
        let (entry, generation) = lock.reading { (entries[key], self.generation) }
        guard let entry, MonotonicClock.nanoseconds() < entry.deadlineNanos, Int64(time(nil)) < entry.until else {
            return (nil, generation)
        }
        return (entry.response, generation)
    }

    func store(_ response: HTTPResponse, for key: Key, generation: UInt64) {
        guard response.status == 200, let until = response.reusableUntil, response.wire != nil else { return }
        let entry = Entry(response: response, deadlineNanos: MonotonicClock.nanoseconds() &+ Self.lifetimeNanos, until: until)
        lock.writing {
            guard generation == self.generation else { return }
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = entry
        }
    }

    func clear() {
        lock.writing {
            entries.removeAll()
            generation &+= 1
        }
    }
}
