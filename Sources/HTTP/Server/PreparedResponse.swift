import CMicroHTTPD

/// A response turned into a libmicrohttpd response once, for answers served many times
/// unchanged (a cached statement). Building the MHD response (a copy of the body and a malloc
/// per header) cost more per request than the handler that produced it; MHD counts references
/// to a response, so one prepared response can be queued on many connections at once.
final class PreparedResponse: @unchecked Sendable {
    /// Immutable after init; MHD only reads it when sending.
    let handle: OpaquePointer
    let status: UInt32

    init?(_ response: HTTPResponse) {
        guard let handle = ResponseWriter.make(response) else { return nil }
        self.handle = handle
        self.status = ResponseWriter.status(response)
    }

    deinit { MHD_destroy_response(handle) }
}
