import CMicroHTTPD
import Support
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Hands the answer of a deferred request (`HTTPResponse.deferred`) back to the server, from
/// any thread. The first call counts; later ones are ignored, as are calls after the server
/// stopped (the client got 503 or a closed connection).
public struct ResponseCompletion: Sendable {
    private let deliver: @Sendable (HTTPResponse) -> Void

    /// For callers outside the server (tests, a CLI running a handler): `deliver` receives the
    /// answer.
    public init(_ deliver: @escaping @Sendable (HTTPResponse) -> Void) {
        self.deliver = deliver
    }

    public func callAsFunction(_ response: HTTPResponse) { deliver(response) }

    /// Answers with `error` rendered as a handler's thrown error would be.
    public func fail(_ error: any Error) { deliver(ErrorRendering.response(for: error)) }

    /// Answers with what `body` returns, or with what it throws rendered.
    public func callAsFunction(_ body: () throws -> HTTPResponse) {
        do { deliver(try body()) } catch { fail(error) }
    }

    /// A completion that passes every answer through `transform` first (a router's policy).
    func mapping(_ transform: @escaping @Sendable (HTTPResponse) -> HTTPResponse) -> ResponseCompletion {
        ResponseCompletion { [deliver] response in deliver(transform(response)) }
    }
}

/// One suspended request: the connection to resume and, once completed, its answer.
/// `response` is written and read only under `Suspensions`' lock.
final class DeferredSlot: @unchecked Sendable {
    let connection: OpaquePointer
    var response: HTTPResponse?

    init(connection: OpaquePointer) { self.connection = connection }
}

/// The server's suspended connections. The races it settles:
/// - `complete` before `start` even returned: the connection is suspended before `start` runs,
///   so resuming is always legal; the answer is stored before the resume, so the access
///   callback that follows finds it.
/// - the client closing while suspended: MHD does not watch a suspended socket, so the
///   connection stays until resumed; the slot is owned by the completion, not by MHD's request
///   state, so the request-completed callback frees nothing a worker still uses.
/// - `stop()` with connections suspended: MHD must not stop with any (it panics), so `stopAll`
///   resumes them all with a 503 and marks the server stopped under the lock; a completion
///   arriving later finds the slot gone and touches no connection.
final class Suspensions: Sendable {
    private struct State {
        var stopped = false
        var waiting: [ObjectIdentifier: DeferredSlot] = [:]
    }

    private let state = Locked(State())

    static let stopping = ResponsePolicy.publicRead.apply(to: .error(
        status: .serviceUnavailable, code: "temporarily_unavailable", description: "the server is stopping"))

    /// Records a connection the caller has just suspended. False when the server is stopping:
    /// the connection has then been resumed with a 503 and the work must not start.
    func register(_ slot: DeferredSlot) -> Bool {
        state.withLock { state in
            if state.stopped {
                slot.response = Self.stopping
                MHD_resume_connection(slot.connection)
                return false
            }
            state.waiting[ObjectIdentifier(slot)] = slot
            return true
        }
    }

    func complete(_ slot: DeferredSlot, with response: HTTPResponse) {
        state.withLock { state in
            guard !state.stopped, state.waiting.removeValue(forKey: ObjectIdentifier(slot)) != nil else { return }
            slot.response = response
            MHD_resume_connection(slot.connection)
        }
    }

    /// The answer of a resumed connection.
    func take(_ slot: DeferredSlot) -> HTTPResponse? {
        state.withLock { _ in
            defer { slot.response = nil }
            return slot.response
        }
    }

    /// Before `MHD_stop_daemon`: resumes every suspended connection (MHD requires it).
    func stopAll() {
        state.withLock { state in
            state.stopped = true
            for slot in state.waiting.values {
                slot.response = Self.stopping
                MHD_resume_connection(slot.connection)
            }
            state.waiting.removeAll()
        }
    }

    /// For a restart after `stop()`.
    func reset() {
        state.withLock { $0.stopped = false }
    }

    var count: Int { state.read { $0.waiting.count } }
}

extension HTTPResponse {
    /// This response, or for a deferred one the answer it completes with (waiting up to
    /// `timeoutSeconds`, then 503). For tests and command-line callers that run handlers
    /// without a server; never call it on a server worker thread.
    public func resolved(timeoutSeconds: Double = 30) -> HTTPResponse {
        guard let start = deferredStart else { return self }
        let box = Locked<HTTPResponse?>(nil)
        start(ResponseCompletion { response in box.withLock { if $0 == nil { $0 = response } } })
        let deadline = MonotonicClock.nanoseconds() &+ UInt64(timeoutSeconds * 1e9)
        while MonotonicClock.nanoseconds() < deadline {
            if let response = box.current { return response.resolved(timeoutSeconds: timeoutSeconds) }
            var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            nanosleep(&pause, nil)
        }
        return .error(status: .serviceUnavailable, code: "temporarily_unavailable", description: "no answer in time")
    }
}
