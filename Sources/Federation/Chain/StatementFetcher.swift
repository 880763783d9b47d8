import Foundation
import HTTPClient
import Support

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
/// they arrive. Blocks the calling thread, so run it off the HTTP workers. Each transfer is one
/// `HTTPClient` exchange on a handle of its own (clients are not thread-safe).
public final class HTTPStatementFetcher: StatementFetcher, @unchecked Sendable {
    private let timeout: TimeInterval
    private let slots: OriginSlots
    let maxBytes: Int
    public let allowList: FetchAllowList
    /// Redirects followed per request, each checked against the allow-list.
    static let maxRedirects = 5

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
        self.timeout = timeout
        self.maxBytes = maxBytes
        self.allowList = allowList
        slots = OriginSlots(limit: maxConcurrentPerOrigin)
    }

    public func get(_ url: String) throws(FederationError) -> String {
        try get(url, deadline: .distant)
    }

    public func get(_ url: String, deadline: Deadline) throws(FederationError) -> String {
        try transfer(url, form: nil, deadline: deadline)
    }

    /// One GET, or a form POST, under every rule above; redirects are followed here, not by
    /// libcurl, so each target is checked against the allow-list before any connection to it.
    private func transfer(_ url: String, form: [(name: String, value: String)]?, deadline: Deadline) throws(FederationError) -> String {
        var current = url
        for _ in 0...Self.maxRedirects {
            guard let origin = FetchAllowList.origin(current) else { throw .invalidRequest("not an http(s) URL: \(current)") }
            guard allowList.allows(current) else {
                throw .invalidRequest("fetching \(current) is not allowed by this server's fetch allow-list (--fetch-allow)")
            }
            // Waiting for a slot spends the same budget as the fetch itself.
            let slotDeadline = Deadline.after(seconds: min(timeout, deadline.remaining))
            guard !deadline.hasPassed, slots.acquire(origin, until: slotDeadline) else {
                throw .temporarilyUnavailable("no time left to fetch \(current) (\(origin) is busy or the resolve ran out of time)")
            }
            let budget = min(timeout, deadline.remaining)
            let response: HTTPClient.Response
            do throws(HTTPClient.Failure) {
                defer { slots.release(origin) }
                guard budget > 0 else { throw HTTPClient.Failure.timedOut }
                let client = try HTTPClient(timeout: budget, maxBytes: maxBytes)
                if let form { response = try client.postForm(current, form) } else { response = try client.get(current) }
            } catch {
                switch error {
                case .tooLarge: throw .temporarilyUnavailable("response from \(current) is larger than \(maxBytes) bytes")
                case .timedOut: throw .temporarilyUnavailable("timed out fetching \(current)")
                case .failed(let reason): throw .temporarilyUnavailable("fetching \(current) failed: \(reason)")
                }
            }
            if (300..<400).contains(response.status) {
                // A redirect out of the list counts as the answer, refused as not 200.
                guard let target = response.redirectURL, allowList.allows(target) else {
                    throw .notFound("\(current) answered HTTP \(response.status)")
                }
                current = target
                continue
            }
            guard response.status == 200 else { throw .notFound("\(current) answered HTTP \(response.status)") }
            guard let text = String(validating: response.body, as: UTF8.self) else { throw .invalidTrustChain("response from \(current) is not UTF-8") }
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        throw .temporarilyUnavailable("fetching \(url) was redirected more than \(Self.maxRedirects) times")
    }
}

/// Trust mark status requests (section 8.4.1) go out under the same allow-list, per-origin cap,
/// timeout and size limit as statement fetches.
extension HTTPStatementFetcher: TrustMarkStatusClient {
    public func post(_ url: String, form: [(name: String, value: String)]) throws(FederationError) -> String {
        try transfer(url, form: form, deadline: .distant)
    }
}
