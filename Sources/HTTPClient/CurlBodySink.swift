import CCurl

/// A libcurl response body collected up to `limit` bytes: the write callback refuses the piece
/// that would pass it, which aborts the transfer at once, so an oversized body never sits whole
/// in memory.
final class CurlBodySink {
    private(set) var bytes: [UInt8] = []
    let limit: Int
    /// Whether the transfer was aborted for passing `limit`.
    private(set) var overflowed = false

    init(limit: Int) { self.limit = limit }

    /// Makes this sink `curl`'s write function and data. The handle keeps an unretained pointer:
    /// keep the sink alive (`withExtendedLifetime`) until `curl_easy_perform` returns.
    func install(on curl: UnsafeMutableRawPointer) -> Bool {
        trustbed_curl_set_write(curl, { data, size, count, context in
            guard let data, let context else { return 0 }
            let sink = Unmanaged<CurlBodySink>.fromOpaque(context).takeUnretainedValue()
            let n = size * count
            guard sink.bytes.count + n <= sink.limit else { sink.overflowed = true; return 0 }
            data.withMemoryRebound(to: UInt8.self, capacity: n) { sink.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: n)) }
            return n
        }, Unmanaged.passUnretained(self).toOpaque()) == CURLE_OK
    }
}
