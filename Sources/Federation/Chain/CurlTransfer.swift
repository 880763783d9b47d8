import CCurl
import Foundation
import Support

/// One HTTP exchange through libcurl's easy interface, blocking the calling thread.
enum CurlTransfer {
    enum Outcome {
        case body(status: Int, [UInt8])
        case redirect(status: Int, to: String?)
        case tooLarge
        case timedOut
        case failed(String)
    }

    /// libcurl's global set-up is not thread-safe; it runs once, before the first fetcher exists.
    static let initializeOnce: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    static func perform(_ url: String, form: [(name: String, value: String)]?, seconds: Double, maxBytes: Int) -> Outcome {
        guard let curl = curl_easy_init() else { return .failed("libcurl could not start a transfer") }
        defer { curl_easy_cleanup(curl) }
        let sink = CurlBodySink(limit: maxBytes)
        let millis = max(1, Int(seconds * 1000))
        var headers: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headers) }
        let body = form.map { Parameters(pairs: $0).encoded } ?? ""
        var ok = trustbed_curl_set_string(curl, CURLOPT_URL, url) == CURLE_OK
        // Threads share no signal handling with libcurl; http(s) only, also for redirects
        // (which are not followed here: the caller checks each target first).
        ok = ok && trustbed_curl_set_long(curl, CURLOPT_NOSIGNAL, 1) == CURLE_OK
        ok = ok && trustbed_curl_set_string(curl, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK
        ok = ok && trustbed_curl_set_long(curl, CURLOPT_FOLLOWLOCATION, 0) == CURLE_OK
        ok = ok && trustbed_curl_set_long(curl, CURLOPT_TIMEOUT_MS, millis) == CURLE_OK
        ok = ok && trustbed_curl_set_long(curl, CURLOPT_CONNECTTIMEOUT_MS, millis) == CURLE_OK
        ok = ok && trustbed_curl_set_long(curl, CURLOPT_MAXFILESIZE_LARGE, maxBytes) == CURLE_OK
        ok = ok && trustbed_curl_set_string(curl, CURLOPT_USERAGENT, "trustbed") == CURLE_OK
        ok = ok && sink.install(on: curl)
        if form != nil {
            headers = curl_slist_append(headers, "Content-Type: application/x-www-form-urlencoded")
            ok = ok && trustbed_curl_set_pointer(curl, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headers)) == CURLE_OK
            ok = ok && trustbed_curl_set_string(curl, CURLOPT_COPYPOSTFIELDS, body) == CURLE_OK
        }
        guard ok else { return .failed("libcurl refused an option") }
        let code = withExtendedLifetime(sink) { curl_easy_perform(curl) }
        if sink.overflowed || code == CURLE_FILESIZE_EXCEEDED { return .tooLarge }
        switch code {
        case CURLE_OK: break
        case CURLE_OPERATION_TIMEDOUT: return .timedOut
        default: return .failed(String(cString: curl_easy_strerror(code)))
        }
        let status = trustbed_curl_response_code(curl)
        if (300..<400).contains(status) {
            return .redirect(status: status, to: trustbed_curl_redirect_url(curl).map { String(cString: $0) })
        }
        return .body(status: status, sink.bytes)
    }
}
