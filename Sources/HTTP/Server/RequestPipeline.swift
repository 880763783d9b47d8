import CMicroHTTPD
import CMicroHTTPDSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging

/// The per-request state machine behind MHD's access callback. MHD calls it once when headers
/// are in, once per body piece, and once more when the request is complete. A response queued
/// on the first call makes MHD skip the body and close the connection, so that is done only
/// to refuse a body (413, 405); everything else is answered on the last call, keeping the
/// connection alive.
///
/// `*con_cls` holds nothing (first call), the server's own address as a marker (a bodiless
/// request: nothing to allocate), or a retained `RequestContext` (a body or a query).
extension HTTPServer {
    func access(
        connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>, version: UnsafePointer<CChar>?,
        upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
        state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> Bool {
        guard let raw = state.pointee else {
            return begin(connection: connection, url: url, method: method, version: version, context: nil, state: state)
        }
        if raw == marker {
            // MHD saw no body framing, so no body can arrive; refuse rather than misroute one.
            guard uploadSize.pointee == 0 else { return false }
            return dispatch(
                connection: connection, kind: HTTPMethod(cString: method), url: url, rawQuery: nil, body: [],
                start: accessLog.isEnabled ? MonotonicClock.nanoseconds() : 0, state: state)
        }
        let context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
        if let slot = context.deferred {
            return resumed(slot, context: context, connection: connection, method: method, url: url)
        }
        guard context.begun else {
            return begin(connection: connection, url: url, method: method, version: version, context: context, state: state)
        }
        return receive(
            context, connection: connection, url: url, method: method, upload: upload, uploadSize: uploadSize, state: state)
    }

    /// Marks a bodiless request in `*con_cls` without allocating.
    var marker: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// First call: headers are complete; refuse requests without a required Host, with too many
    /// query parameters, and bodies we will not read, else get ready.
    private func begin(
        connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>, version: UnsafePointer<CChar>?,
        context: RequestContext?, state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> Bool {
        // RFC 9112 §3.2: a server MUST answer 400 to an HTTP/1.1 request without Host (HTTP/1.0
        // had no such rule). libmicrohttpd 0.9.75 lets it through unless told to be strict, and
        // then answers with its own HTML page.
        if let version, strcmp(version, "HTTP/1.0") != 0, trustbed_mhd_request_header(connection, "Host") == nil {
            return send(BuiltinResponses.missingHost, connection: connection, kind: HTTPMethod(cString: method), url: url,
                        start: accessLog.isEnabled ? MonotonicClock.nanoseconds() : 0)
        }
        if let context, context.queryParameters > configuration.queryParameterLimit {
            return send(tooManyParameters, connection: connection, kind: HTTPMethod(cString: method), url: url,
                        start: accessLog.isEnabled ? MonotonicClock.nanoseconds() : 0)
        }
        let declaredLength = trustbed_mhd_request_header(connection, "Content-Length").flatMap(Self.contentLength)
        let chunked = trustbed_mhd_request_header(connection, "Transfer-Encoding") != nil
        let hasBody = chunked || (declaredLength ?? 0) > 0

        if hasBody {
            let start = accessLog.isEnabled ? MonotonicClock.nanoseconds() : 0
            var limit = configuration.bodyLimit
            if let declaredLength, declaredLength > limit {
                limit = routeLimit(connection: connection, method: method, url: url, rawQuery: context?.rawQuery)
                if declaredLength > limit {
                    return send(tooLarge(limit), connection: connection, kind: HTTPMethod(cString: method), url: url, start: start)
                }
            }
            let receiving = context ?? RequestContext()
            if context == nil { state.pointee = Unmanaged.passRetained(receiving).toOpaque() }
            receiving.begun = true
            receiving.bodyLimit = limit
            receiving.startNanos = start
            if let declaredLength { receiving.body.reserveCapacity(declaredLength) }
            return true
        }

        if let context {
            context.begun = true
            context.startNanos = accessLog.isEnabled ? MonotonicClock.nanoseconds() : 0
        } else {
            state.pointee = marker
        }
        return true
    }

    /// The limit of the route a body over the server's `bodyLimit` goes to (`routeBodyLimit`, given
    /// the request without its body), never below the server's own.
    private func routeLimit(connection: OpaquePointer, method: UnsafePointer<CChar>, url: UnsafePointer<CChar>, rawQuery: String?) -> Int {
        guard let routeBodyLimit else { return configuration.bodyLimit }
        let request = HTTPRequest(
            trustedMethod: HTTPMethod(cString: method), path: String(cString: url), rawQuery: rawQuery,
            fields: ConnectionInfo.fields(connection), body: [], remote: .client(ConnectionInfo.clientAddress(connection)))
        return max(configuration.bodyLimit, routeBodyLimit(request) ?? 0)
    }

    /// 413 for a body over `limit`: the answer built once for the server's limit, else a new one.
    private func tooLarge(_ limit: Int) -> HTTPResponse {
        limit == configuration.bodyLimit ? tooLarge : BuiltinResponses.payloadTooLarge(limit: limit)
    }

    /// Content-Length as a number, saturating at `Int.max` so a huge value still counts as too
    /// large; nil when it is not all digits (MHD has already refused such requests).
    static func contentLength(_ text: UnsafePointer<CChar>) -> Int? {
        var value = 0
        var index = 0
        while text[index] != 0 {
            let digit = Int(text[index]) - 48
            guard digit >= 0 && digit <= 9 else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(digit)
            value = (overflow1 || overflow2) ? Int.max : sum
            index += 1
        }
        return index == 0 ? nil : value
    }

    /// Later calls: a piece of body, or (size 0) the end of the request.
    private func receive(
        _ context: RequestContext, connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>,
        upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
        state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> Bool {
        let size = uploadSize.pointee
        if size > 0 {
            uploadSize.pointee = 0  // consumed, whether kept or dropped
            if context.tooLarge {
                context.discarded &+= size
                return context.discarded <= discardLimit
            }
            if context.body.count + size > context.bodyLimit, context.bodyLimit == configuration.bodyLimit {
                // A chunked body over the server's limit: its route may take more (asked once).
                context.bodyLimit = routeLimit(connection: connection, method: method, url: url, rawQuery: context.rawQuery)
            }
            if context.body.count + size > context.bodyLimit {
                // A chunked body has no length up front. Stop buffering now; the 413 can only be
                // queued once MHD has read the whole request.
                context.tooLarge = true
                context.discarded = context.body.count + size
                context.body = []
                return true
            }
            if let upload {
                context.body.append(contentsOf: UnsafeRawBufferPointer(start: upload, count: size))
            }
            return true
        }

        let kind = HTTPMethod(cString: method)
        if context.tooLarge {
            return send(tooLarge(context.bodyLimit), connection: connection, kind: kind, url: url, start: context.startNanos)
        }
        let body = context.body
        context.body = []
        return dispatch(
            connection: connection, kind: kind, url: url, rawQuery: context.rawQuery, body: body,
            start: context.startNanos, state: state)
    }

    /// The request is complete: answer from the memo, or run the handler and queue its answer
    /// (or suspend the connection until a deferred answer is ready).
    private func dispatch(
        connection: OpaquePointer, kind: HTTPMethod, url: UnsafePointer<CChar>, rawQuery: String?, body: [UInt8],
        start: UInt64, state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> Bool {
        let path = String(cString: url)
        var memoKey: (key: ResponseMemo.Key, generation: UInt64)?
        var routing: RoutingHeaders?
        if (kind == .get || kind == .head) && body.isEmpty && trustbed_mhd_has_credentials(connection) == 0 {
            routing = ConnectionInfo.routingHeaders(connection)
            let key = ResponseMemo.Key(path: path, query: rawQuery, routing: routing!)
            let (reused, generation) = memo.lookup(key)
            if let reused {
                let queued = MHD_queue_response(connection, reused.wire.status, reused.wire.handle) == .YES
                return logged(queued, kind: kind, path: path, status: Int(reused.wire.status), bytes: reused.bytes, start: start)
            }
            memoKey = (key, generation)
        }
        var request = HTTPRequest(
            trustedMethod: kind, path: path, rawQuery: rawQuery,
            fields: ConnectionInfo.fields(connection), body: body,
            remote: .client(ConnectionInfo.clientAddress(connection)))
        request.routing = routing
        let response = handler(request)
        if let begin = response.deferredStart {
            return suspend(connection, start: begin, memoKey: memoKey, startNanos: start, state: state)
        }
        let stored = memoKey.flatMap { memo.store(response, for: $0.key, generation: $0.generation) }
        return send(response, prepared: stored, connection: connection, kind: kind, path: path, start: start)
    }

    /// Suspends the connection, then starts the deferred work: in that order, so a completion
    /// (from any thread, at any time) always finds the connection suspended.
    private func suspend(
        _ connection: OpaquePointer, start begin: @Sendable (ResponseCompletion) -> Void,
        memoKey: (key: ResponseMemo.Key, generation: UInt64)?, startNanos: UInt64,
        state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> Bool {
        let context: RequestContext
        if let raw = state.pointee, raw != marker {
            context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
        } else {
            context = RequestContext()
            context.begun = true
            state.pointee = Unmanaged.passRetained(context).toOpaque()
        }
        let slot = DeferredSlot(connection: connection)
        context.deferred = slot
        context.memoKey = memoKey
        context.startNanos = startNanos
        MHD_suspend_connection(connection)
        guard suspensions.register(slot) else { return true }
        let suspensions = self.suspensions
        begin(ResponseCompletion { response in suspensions.complete(slot, with: response) })
        return true
    }

    /// The access callback MHD makes after a deferred request was resumed: queue its answer.
    private func resumed(
        _ slot: DeferredSlot, context: RequestContext, connection: OpaquePointer, method: UnsafePointer<CChar>,
        url: UnsafePointer<CChar>
    ) -> Bool {
        context.deferred = nil
        var response = suspensions.take(slot) ?? BuiltinResponses.internalError
        if response.isDeferred {
            response = BuiltinResponses.internalError
            response.failure = "a deferred answer completed with another deferred answer"
        }
        var stored: PreparedResponse?
        if let memoKey = context.memoKey {
            context.memoKey = nil
            stored = memo.store(response, for: memoKey.key, generation: memoKey.generation)
        }
        return send(response, prepared: stored, connection: connection, kind: HTTPMethod(cString: method), path: String(cString: url),
                    start: context.startNanos)
    }

    private func send(
        _ response: HTTPResponse, connection: OpaquePointer, kind: HTTPMethod, url: UnsafePointer<CChar>, start: UInt64
    ) -> Bool {
        send(response, connection: connection, kind: kind, path: String(cString: url), start: start)
    }

    /// `prepared`: the MHD response the memo made of `response`, queued instead of making another.
    private func send(
        _ response: HTTPResponse, prepared: PreparedResponse? = nil, connection: OpaquePointer, kind: HTTPMethod, path: String,
        start: UInt64
    ) -> Bool {
        if let failure = response.failure {
            // A plain literal and the path only: the access log's rules (no query, no headers).
            accessLog.logger.error(Logger.Message(stringLiteral: "\(kind) \(path) failed: \(failure)"), source: "HTTP")
        }
        let queued = prepared.map { MHD_queue_response(connection, $0.status, $0.handle) == .YES }
            ?? ResponseWriter.queue(response, on: connection)
        return logged(queued, kind: kind, path: path, status: response.status.code, bytes: response.body.count, start: start)
    }

    /// Writes the access-log line of a request whose answer is queued (or refused), passing
    /// MHD's verdict through.
    private func logged(_ queued: Bool, kind: HTTPMethod, path: String, status: Int, bytes: Int, start: UInt64) -> Bool {
        if accessLog.isEnabled {
            accessLog.record(method: kind.name, path: path, status: status, bytes: bytes, startNanos: start)
        }
        return queued
    }
}
