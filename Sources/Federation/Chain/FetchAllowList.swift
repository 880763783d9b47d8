import Dispatch
import Foundation
import Support

/// Which URLs a fetcher may request, redirects included. Default-deny: a server only reaches the
/// origins and prefixes it was given (a public resolve endpoint would otherwise let any caller
/// make it connect anywhere); the CLI client, which resolves whatever its user names, uses
/// `.everything`.
public struct FetchAllowList: Sendable, Equatable {
    public let allowsEverything: Bool
    /// Normalised `scheme://host:port` origins.
    public let origins: Set<String>
    /// URL prefixes, compared as given.
    public let prefixes: [String]

    public static let everything = FetchAllowList(everything: true)

    private init(everything: Bool) {
        allowsEverything = everything
        origins = []
        prefixes = []
    }

    /// `origins` like `https://host:port` (scheme, host and port compare case-insensitively,
    /// default ports normalised); a prefix that is only an origin (`https://a.example` or
    /// `https://a.example/`) counts as that origin, so it cannot match `https://a.example.evil`.
    public init(origins: Set<String> = [], prefixes: [String] = []) {
        allowsEverything = false
        var normalised = Set(origins.compactMap(Self.origin))
        var rest: [String] = []
        for p in prefixes {
            if let c = URLComponents(string: p), c.host != nil, c.path.isEmpty || c.path == "/", c.query == nil, let o = Self.origin(p) {
                normalised.insert(o)
            } else {
                rest.append(p)
            }
        }
        self.origins = normalised
        self.prefixes = rest
    }

    public func allows(_ url: String) -> Bool {
        guard let origin = Self.origin(url) else { return false }
        return allowsEverything || origins.contains(origin) || prefixes.contains { url.hasPrefix($0) }
    }

    /// `scheme://host:port` of an absolute http(s) URL, lower-cased, default port spelled out
    /// (RFC 6454 §4); nil for anything else.
    public static func origin(_ url: String) -> String? {
        guard let c = URLComponents(string: url), let scheme = c.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = c.host?.lowercased(), !host.isEmpty else { return nil }
        let port = c.port ?? (scheme == "https" ? 443 : 80)
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(bracketed):\(port)"
    }
}

/// At most `limit` fetches run against one origin at a time, so one slow host holds at most that
/// many connections; a caller waits for a slot only until its deadline.
final class OriginSlots: Sendable {
    private let limit: Int
    private let semaphores = Locked<[String: DispatchSemaphore]>([:])

    init(limit: Int) { self.limit = max(1, limit) }

    /// Takes a slot for `origin`, false if none freed up before `deadline`.
    func acquire(_ origin: String, until deadline: Deadline) -> Bool {
        semaphore(origin).wait(timeout: deadline.dispatchTime) == .success
    }

    func release(_ origin: String) { semaphore(origin).signal() }

    private func semaphore(_ origin: String) -> DispatchSemaphore {
        if let s = semaphores.read({ $0[origin] }) { return s }
        return semaphores.withLock { map in
            if let s = map[origin] { return s }
            let s = DispatchSemaphore(value: limit)
            map[origin] = s
            return s
        }
    }
}
