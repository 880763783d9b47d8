/// State for one request that outlives the first MHD callback: a body, a query, or a deferred
/// answer. Allocated only when needed — a bodiless request without a query never creates one —
/// and owned by MHD's `*con_cls` slot: retained when stored there, released in the
/// request-completed callback.
final class RequestContext {
    /// The query exactly as received, captured before MHD splits and decodes it in place.
    var rawQuery: String?
    /// Set on the first access callback, once headers are processed.
    var begun = false
    var body: [UInt8] = []
    /// The body went over the limit: the rest is read and dropped, then 413 is sent.
    var tooLarge = false
    var discarded = 0
    var startNanos: UInt64 = 0
    /// The request is suspended waiting for this (see `Suspensions`).
    var deferred: DeferredSlot?
    /// Where the deferred answer goes in the memo, when the request may use it.
    var memoKey: (key: ResponseMemo.Key, generation: UInt64)?

    init(rawQuery: String? = nil) {
        self.rawQuery = rawQuery
    }
}
