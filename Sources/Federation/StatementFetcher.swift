import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fetches federation documents from other servers. A protocol so tests and the chain builder
/// can run against in-memory federations.
public protocol StatementFetcher: Sendable {
    /// GETs `url` and returns the body; errors map to `temporarilyUnavailable`/`invalidSubject` etc. by the caller.
    func get(_ url: String) throws(FederationError) -> String
}

/// HTTP(S) fetcher with a hard timeout and a response size limit, so one slow or hostile remote
/// cannot pin a worker or exhaust memory.
public final class HTTPStatementFetcher: StatementFetcher, @unchecked Sendable {
    private let session: URLSession
    private let maxBytes: Int
    private let timeout: TimeInterval

    public init(timeout: TimeInterval = 5, maxBytes: Int = 1 << 20) {
        let config = URLSessionConfiguration.ephemeral
        config.timeoutIntervalForRequest = timeout
        config.timeoutIntervalForResource = timeout
        config.requestCachePolicy = .reloadIgnoringLocalCacheData
        config.httpAdditionalHeaders = ["User-Agent": "trustbed"]
        session = URLSession(configuration: config)
        self.maxBytes = maxBytes
        self.timeout = timeout
    }

    public func get(_ url: String) throws(FederationError) -> String {
        guard let u = URL(string: url), let scheme = u.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw .invalidRequest("not an http(s) URL: \(url)")
        }
        let done = DispatchSemaphore(value: 0)
        final class Box: @unchecked Sendable { var data: Data?; var response: URLResponse?; var error: Error? }
        let box = Box()
        var request = URLRequest(url: u, timeoutInterval: timeout)
        request.httpMethod = "GET"
        let task = session.dataTask(with: request) { data, response, error in
            box.data = data
            box.response = response
            box.error = error
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + timeout + 1) == .timedOut {
            task.cancel()
            throw .temporarilyUnavailable("timed out fetching \(url)")
        }
        if let error = box.error { throw .temporarilyUnavailable("fetching \(url) failed: \(error.localizedDescription)") }
        guard let http = box.response as? HTTPURLResponse, let data = box.data else {
            throw .temporarilyUnavailable("no response from \(url)")
        }
        if data.count > maxBytes { throw .temporarilyUnavailable("response from \(url) is larger than \(maxBytes) bytes") }
        guard http.statusCode == 200 else {
            throw .notFound("\(url) answered HTTP \(http.statusCode)")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw .invalidTrustChain("response from \(url) is not UTF-8") }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
