import Foundation
import Support
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fetches federation documents from other servers. A protocol so tests and the chain builder
/// can run against in-memory federations.
public protocol StatementFetcher: Sendable {
    /// GETs `url` and returns the body; errors map to `temporarilyUnavailable`/`invalidSubject` etc. by the caller.
    func get(_ url: String) throws(FederationError) -> String
    /// The same within `deadline`: the fetch (and any wait before it) ends when it passes.
    func get(_ url: String, deadline: Deadline) throws(FederationError) -> String
}

extension StatementFetcher {
    public func get(_ url: String, deadline: Deadline) throws(FederationError) -> String {
        if deadline.hasPassed { throw .temporarilyUnavailable("the resolve ran out of time before fetching \(url)") }
        return try get(url)
    }
}

/// HTTP(S) fetcher that a slow or hostile host cannot abuse: only allow-listed URLs (redirects
/// included), at most `maxConcurrentPerOrigin` fetches per origin at once, each within
/// `min(timeout, what is left of the caller's deadline)`, bodies cut off at `maxBytes` while
/// they arrive. Blocks the calling thread, so run it off the HTTP workers.
public final class HTTPStatementFetcher: StatementFetcher, @unchecked Sendable {
    private let session: URLSession
    private let transfers: Transfers
    private let timeout: TimeInterval
    private let slots: OriginSlots
    public let allowList: FetchAllowList

    /// Default-deny: only URLs whose origin is in `allowedOrigins` or that start with one of
    /// `allowedPrefixes` are fetched.
    public convenience init(timeout: TimeInterval = 5, maxBytes: Int = 1 << 20, allowedOrigins: Set<String> = [],
                            allowedPrefixes: [String] = [], maxConcurrentPerOrigin: Int = 4) {
        self.init(timeout: timeout, maxBytes: maxBytes, allowList: FetchAllowList(origins: allowedOrigins, prefixes: allowedPrefixes),
                  maxConcurrentPerOrigin: maxConcurrentPerOrigin)
    }

    /// A client that fetches any http(s) URL (the CLI's `resolve` and `check`).
    public static func allowingEverything(timeout: TimeInterval = 5, maxBytes: Int = 1 << 20,
                                          maxConcurrentPerOrigin: Int = 4) -> HTTPStatementFetcher {
        HTTPStatementFetcher(timeout: timeout, maxBytes: maxBytes, allowList: .everything, maxConcurrentPerOrigin: maxConcurrentPerOrigin)
    }

    public init(timeout: TimeInterval, maxBytes: Int, allowList: FetchAllowList, maxConcurrentPerOrigin: Int) {
        let config = URLSessionConfiguration.ephemeral
        config.timeoutIntervalForRequest = timeout
        config.timeoutIntervalForResource = timeout
        config.requestCachePolicy = .reloadIgnoringLocalCacheData
        config.httpAdditionalHeaders = ["User-Agent": "trustbed"]
        transfers = Transfers(maxBytes: maxBytes, allowList: allowList)
        session = URLSession(configuration: config, delegate: transfers, delegateQueue: nil)
        self.timeout = timeout
        self.allowList = allowList
        slots = OriginSlots(limit: maxConcurrentPerOrigin)
    }

    deinit { session.invalidateAndCancel() }

    public func get(_ url: String) throws(FederationError) -> String {
        try get(url, deadline: .distant)
    }

    public func get(_ url: String, deadline: Deadline) throws(FederationError) -> String {
        try transfer(url, form: nil, deadline: deadline)
    }

    /// One GET, or a form POST, under every rule above.
    private func transfer(_ url: String, form: [(name: String, value: String)]?, deadline: Deadline) throws(FederationError) -> String {
        guard let u = URL(string: url), let origin = FetchAllowList.origin(url) else {
            throw .invalidRequest("not an http(s) URL: \(url)")
        }
        guard allowList.allows(url) else {
            throw .invalidRequest("fetching \(url) is not allowed by this server's fetch allow-list (--fetch-allow)")
        }
        // Waiting for a slot spends the same budget as the fetch itself.
        let slotDeadline = Deadline.after(seconds: min(timeout, deadline.remaining))
        guard !deadline.hasPassed, slots.acquire(origin, until: slotDeadline) else {
            throw .temporarilyUnavailable("no time left to fetch \(url) (\(origin) is busy or the resolve ran out of time)")
        }
        defer { slots.release(origin) }
        let budget = min(timeout, deadline.remaining)
        guard budget > 0 else { throw .temporarilyUnavailable("the resolve ran out of time before fetching \(url)") }

        var request = URLRequest(url: u, timeoutInterval: budget)
        request.httpMethod = form == nil ? "GET" : "POST"
        if let form {
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(Parameters(pairs: form).encoded.utf8)
        }
        let task = session.dataTask(with: request)
        let transfer = transfers.begin(task)
        task.resume()
        if transfer.done.wait(timeout: .now() + budget) == .timedOut {
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

/// Trust mark status requests (section 8.4.1) go out under the same allow-list, per-origin cap,
/// timeout and size limit as statement fetches.
extension HTTPStatementFetcher: TrustMarkStatusClient {
    public func post(_ url: String, form: [(name: String, value: String)]) throws(FederationError) -> String {
        try transfer(url, form: form, deadline: .distant)
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
    private let allowList: FetchAllowList
    private let lock = NSLock()
    private var running: [Int: Transfer] = [:]

    init(maxBytes: Int, allowList: FetchAllowList) {
        self.maxBytes = maxBytes
        self.allowList = allowList
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
        completionHandler(allowList.allows(request.url?.absoluteString ?? "") ? request : nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        guard let transfer = transfer(task) else { return }
        transfer.error = error
        end(task)
        transfer.done.signal()
    }
}
