import CCurl
import Foundation

/// A blocking one-shot HTTP exchange for CLI commands that call a running server's API
/// (`trustbed offer`): any method, request headers, a body, and the status and body back. The
/// resolver's fetcher (`CurlTransfer`) only GETs and posts forms; this sends JSON with an
/// `Authorization` header. http and https only; redirects are not followed.
enum CLIHTTPClient {
    struct Response {
        let status: Int
        let body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private final class Sink {
        var bytes: [UInt8] = []
    }

    private static let initializeOnce: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    static func send(_ method: String, _ url: String, headers: [String] = [], body: [UInt8]? = nil,
                     seconds: Int = 30) throws -> Response {
        _ = initializeOnce
        guard let curl = curl_easy_init() else { throw Failure(description: "libcurl could not start a transfer") }
        defer { curl_easy_cleanup(curl) }
        var list: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(list) }
        for header in headers { list = curl_slist_append(list, header) }
        let sink = Sink()
        var ok = trustbed_curl_set_string(curl, CURLOPT_URL, url) == CURLE_OK
        ok = ok && trustbed_curl_set_long(curl, CURLOPT_NOSIGNAL, 1) == CURLE_OK
        ok = ok && trustbed_curl_set_string(curl, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK
        ok = ok && trustbed_curl_set_long(curl, CURLOPT_TIMEOUT_MS, seconds * 1000) == CURLE_OK
        ok = ok && trustbed_curl_set_string(curl, CURLOPT_USERAGENT, "trustbed") == CURLE_OK
        ok = ok && trustbed_curl_set_string(curl, CURLOPT_CUSTOMREQUEST, method) == CURLE_OK
        if let list { ok = ok && trustbed_curl_set_pointer(curl, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list)) == CURLE_OK }
        if let body {
            ok = ok && trustbed_curl_set_long(curl, CURLOPT_POSTFIELDSIZE, body.count) == CURLE_OK
            // COPYPOSTFIELDS copies `body.count` bytes (set just above), so binary bodies work.
            ok = ok && body.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    trustbed_curl_set_pointer(curl, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress))
                }
            } == CURLE_OK
        }
        ok = ok && trustbed_curl_set_write(curl, { data, size, count, context in
            guard let data, let context else { return 0 }
            let n = size * count
            data.withMemoryRebound(to: UInt8.self, capacity: n) {
                Unmanaged<Sink>.fromOpaque(context).takeUnretainedValue().bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: n))
            }
            return n
        }, Unmanaged.passUnretained(sink).toOpaque()) == CURLE_OK
        guard ok else { throw Failure(description: "libcurl refused an option") }
        let code = withExtendedLifetime(sink) { curl_easy_perform(curl) }
        guard code == CURLE_OK else { throw Failure(description: "\(url): \(String(cString: curl_easy_strerror(code)))") }
        return Response(status: trustbed_curl_response_code(curl), body: sink.bytes)
    }
}
