/// State for one request that outlives the first MHD callback: a body, a query, or a deferred
/// answer. Allocated only when needed — a bodiless request without a query never creates one —
/// and owned by MHD's `*con_cls` slot: retained when stored there, released in the
/// request-completed callback.
///
/// Only MHD's callbacks for its connection touch it, one at a time on that connection's worker
/// thread, so its fields skip the runtime's exclusivity checks (a runtime call on every access).
final class RequestContext {
    /// The query exactly as received, captured before MHD splits and decodes it in place.
    @exclusivity(unchecked) var rawQuery: String?
    /// Non-empty `&`-separated pieces of `rawQuery`, counted before MHD saw them.
    @exclusivity(unchecked) var queryParameters = 0
    /// Set on the first access callback, once headers are processed.
    @exclusivity(unchecked) var begun = false
    @exclusivity(unchecked) var body: [UInt8] = []
    /// The most body bytes this request may send: the server's `bodyLimit`, or its route's own.
    @exclusivity(unchecked) var bodyLimit = 0
    /// The body went over the limit: the rest is read and dropped, then 413 is sent.
    @exclusivity(unchecked) var tooLarge = false
    @exclusivity(unchecked) var discarded = 0
    @exclusivity(unchecked) var startNanos: UInt64 = 0
    /// The request is suspended waiting for this (see `Suspensions`).
    @exclusivity(unchecked) var deferred: DeferredSlot?
    /// Where the deferred answer goes in the memo, when the request may use it.
    @exclusivity(unchecked) var memoKey: (key: ResponseMemo.Key, generation: UInt64)?

    init(rawQuery: String? = nil) {
        self.rawQuery = rawQuery
    }
}
