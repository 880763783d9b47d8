import CMicroHTTPD
import CMicroHTTPDSupport
import Logging

/// What the server calls for each request (after the memo). Usually a `Site`'s `respond(to:)`,
/// read from where the owner keeps the current site:
///
///     let server = HTTPServer(configuration: c, logger: logger) { request in sites.current.respond(to: request) }
public typealias HTTPHandler = @Sendable (HTTPRequest) -> HTTPResponse

/// An HTTP/1.1 server on libmicrohttpd's internal thread pool. The handler runs on MHD's
/// worker threads, concurrently; it must not block for long, as each worker serves many
/// connections: work that waits on another host answers `HTTPResponse.deferred`.
///
/// `@unchecked Sendable`: after `start()` every stored property the workers read is immutable;
/// `start()` and `stop()` are meant to be called from one owning thread.
public final class HTTPServer: @unchecked Sendable {
    public let configuration: HTTPServerConfiguration
    let handler: HTTPHandler
    /// Asked, before a body over `configuration.bodyLimit` is read, whether its route takes more.
    let routeBodyLimit: (@Sendable (HTTPRequest) -> Int?)?
    let accessLog: AccessLog
    let tooLarge: HTTPResponse
    let tooManyParameters: HTTPResponse
    /// Past this many discarded bytes of an oversized chunked body the connection is dropped
    /// without a reply: a client streaming without end must not hold a connection forever.
    let discardLimit: Int
    let memo: ResponseMemo
    let suspensions = Suspensions()
    private var daemon: OpaquePointer?

    /// The access log is written when `logger.logLevel` is `.info` or lower at this point.
    /// `routeBodyLimit` names the larger limit of a route that takes bodies over the server's
    /// `bodyLimit` (e.g. `site.bodyLimit(for:)`), given the request without its body; it is asked
    /// only for such bodies, so every other request pays nothing for it.
    public init(configuration: HTTPServerConfiguration, logger: Logger, routeBodyLimit: (@Sendable (HTTPRequest) -> Int?)? = nil,
                handler: @escaping HTTPHandler) {
        self.configuration = configuration
        self.handler = handler
        self.routeBodyLimit = routeBodyLimit
        self.accessLog = AccessLog(logger: logger)
        self.tooLarge = BuiltinResponses.payloadTooLarge(limit: configuration.bodyLimit)
        self.tooManyParameters = BuiltinResponses.tooManyQueryParameters(limit: configuration.queryParameterLimit)
        self.discardLimit = max(configuration.bodyLimit, 1 << 20) &* 16  // also past a route's own limit
        self.memo = ResponseMemo(byteBudget: configuration.memoBytes)
    }

    deinit { stop() }

    public func start() throws {
        guard daemon == nil else { return }
        suspensions.reset()
        let config = configuration
        let context = Unmanaged.passUnretained(self).toOpaque()
        daemon = trustbed_mhd_start(
            config.host, config.port,
            UInt32(clamping: max(1, config.threads)),
            UInt32(clamping: max(0, config.connectionTimeout)),
            UInt32(clamping: max(1, config.connectionLimit)),
            UInt32(clamping: max(0, config.perAddressConnectionLimit)),
            mhdAccessHandler, context,
            mhdRequestCompleted, context,
            mhdRequestStarted, context)
        guard daemon != nil else { throw HTTPServerError.cannotBind(config.host, config.port) }
    }

    /// Stops accepting, waits for the workers to finish, and closes every connection. Requests
    /// waiting for a deferred answer are resumed first (MHD cannot stop with suspended
    /// connections) and get 503 or a closed connection; their late completions are ignored.
    /// Not from inside a handler: it joins the worker thread the handler runs on.
    public func stop() {
        guard let running = daemon else { return }
        daemon = nil
        suspensions.stopAll()
        MHD_stop_daemon(running)
    }

    /// Requests suspended waiting for a deferred answer right now.
    public var deferredCount: Int { suspensions.count }

    /// Forgets every reusable answer; call it whenever what the handler serves changes.
    public func clearMemo() { memo.clear() }

    /// The port actually listened on (the kernel's choice after port 0); 0 when stopped.
    public var boundPort: UInt16 {
        daemon.map { trustbed_mhd_bound_port($0) } ?? 0
    }
}
