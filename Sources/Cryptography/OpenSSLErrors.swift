import COpenSSL

/// OpenSSL keeps a per-thread error queue. Stale entries from a failed call can make a later,
/// unrelated check on the same worker thread misread its result, so failures clear it.
enum OpenSSLErrors {
    static func clear() { ERR_clear_error() }
}
