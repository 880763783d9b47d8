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

/// HTTP(S) fetcher with a hard timeout, a size limit enforced while the body arrives, and an
/// optional allow-list of URL prefixes, so one slow or hostile remote cannot pin a worker or
/// exhaust memory, and a public resolver cannot be pointed at hosts it should not reach.
public final class HTTPStatementFetcher: StatementFetcher, @unchecked Sendable {
    private let session: URLSession
    private let transfers: Transfers
    private let timeout: TimeInterval

    /// `allowedPrefixes`: when not empty, only URLs starting with one of them are fetched
    /// (redirects included).
    public init(timeout: TimeInterval = 5, maxBytes: Int = 1 << 20, allowedPrefixes: [String] = []) {
        let config = URLSessionConfiguration.ephemeral
        config.timeoutIntervalForRequest = timeout
        config.timeoutIntervalForResource = timeout
        config.requestCachePolicy = .reloadIgnoringLocalCacheData
        config.httpAdditionalHeaders = ["User-Agent": "trustbed"]
        transfers = Transfers(maxBytes: maxBytes, allowedPrefixes: allowedPrefixes)
        session = URLSession(configuration: config, delegate: transfers, delegateQueue: nil)
        self.timeout = timeout
    }

    deinit { session.invalidateAndCancel() }

    public func get(_ url: String) throws(FederationError) -> String {
        guard let u = URL(string: url), let scheme = u.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw .invalidRequest("not an http(s) URL: \(url)")
        }
        guard transfers.allows(url) else {
            throw .invalidRequest("fetching \(url) is not allowed by this server's --fetch-allow list")
        }
        var request = URLRequest(url: u, timeoutInterval: timeout)
        request.httpMethod = "GET"
        let task = session.dataTask(with: request)
        let transfer = transfers.begin(task)
        task.resume()
        if transfer.done.wait(timeout: .now() + timeout + 1) == .timedOut {
            task.cancel()
            transfers.end(task)
            throw .temporarilyUnavailable("timed out fetching \(url)")
        }
        if transfer.tooLarge { throw .temporarilyUnavailable("response from \(url) is larger than \(transfers.maxBytes) bytes") }
        if let error = transfer.error { throw .temporarilyUnavailable("fetching \(url) failed: \(error.localizedDescription)") }
        guard let http = transfer.response as? HTTPURLResponse else {
            throw .temporarilyUnavailable("no response from \(url)")
        }
        guard http.statusCode == 200 else {
            throw .notFound("\(url) answered HTTP \(http.statusCode)")
        }
        guard let text = String(data: transfer.data, encoding: .utf8) else { throw .invalidTrustChain("response from \(url) is not UTF-8") }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// The session delegate: collects each body as it arrives and stops a transfer the moment it
/// passes the size limit (a completion handler would only see the body once all of it is in
/// memory), and refuses redirects that leave the allow-list.
private final class Transfers: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    final class Transfer: @unchecked Sendable {
        var data = Data()
        var response: URLResponse?
        var error: Error?
        var tooLarge = false
        let done = DispatchSemaphore(value: 0)
    }

    let maxBytes: Int
    private let allowedPrefixes: [String]
    private let lock = NSLock()
    private var running: [Int: Transfer] = [:]

    init(maxBytes: Int, allowedPrefixes: [String]) {
        self.maxBytes = maxBytes
        self.allowedPrefixes = allowedPrefixes
    }

    func allows(_ url: String) -> Bool {
        allowedPrefixes.isEmpty || allowedPrefixes.contains { url.hasPrefix($0) }
    }

    func begin(_ task: URLSessionTask) -> Transfer {
        let transfer = Transfer()
        lock.withLock { running[task.taskIdentifier] = transfer }
        return transfer
    }

    func end(_ task: URLSessionTask) { _ = lock.withLock { running.removeValue(forKey: task.taskIdentifier) } }

    private func transfer(_ task: URLSessionTask) -> Transfer? { lock.withLock { running[task.taskIdentifier] } }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        guard let transfer = transfer(dataTask) else { return completionHandler(.cancel) }
        transfer.response = response
        if response.expectedContentLength > Int64(maxBytes) {
            transfer.tooLarge = true
            return completionHandler(.cancel)
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let transfer = transfer(dataTask), !transfer.tooLarge else { return }
        if transfer.data.count + data.count > maxBytes {
            transfer.tooLarge = true
            transfer.data = Data()
            dataTask.cancel()
            return
        }
        transfer.data.append(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        // nil: do not follow; the 3xx then counts as the answer and is refused as not 200.
        completionHandler(allows(request.url?.absoluteString ?? "") ? request : nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        guard let transfer = transfer(task) else { return }
        transfer.error = error
        end(task)
        transfer.done.signal()
    }
}
