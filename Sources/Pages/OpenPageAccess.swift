import Support

/// What the open pages (the PID Provider's offer pages, the Wallet Provider's instance page)
/// look at in a request: where the browser thinks it is (`Host`,
/// and `X-Forwarded-Host` when a local proxy is in front) and where a form post comes from
/// (`Origin`, else `Referer`, and `Sec-Fetch-Site`). The Endpoints layer fills it from headers.
public struct PageRequestSource: Sendable, Equatable {
    public var host: String?
    /// Every value of `X-Forwarded-Host` (a list when proxies chain).
    public var forwardedHosts: [String]
    public var origin: String?
    public var referer: String?
    public var fetchSite: String?
    public var isPost: Bool

    public init(host: String?, forwardedHosts: [String] = [], origin: String? = nil, referer: String? = nil,
                fetchSite: String? = nil, isPost: Bool = false) {
        self.host = host
        self.forwardedHosts = forwardedHosts
        self.origin = origin
        self.referer = referer
        self.fetchSite = fetchSite
        self.isPost = isPost
    }
}

/// The guard of the pages a service opens without an admin token on a loopback base URL.
public struct OpenPageAccess: Sendable {
    /// The service's base URL (its entity ID); a request must name it or a loopback name.
    public let baseURL: String

    public init(baseURL: String) { self.baseURL = baseURL }


    /// Why an open page refuses this request, or nil. Call it only on a loopback base URL, where
    /// the page (`/offers/new`, `<wp>/instances`) asks for no admin token because only this
    /// machine can reach it; but a
    /// web page this machine's browser opens can, two ways:
    ///
    /// - DNS rebinding: `evil.example` first resolves to the attacker, then to 127.0.0.1, so the
    ///   attacker's script reads our pages same-origin, tx_codes included. Its requests still
    ///   say `Host: evil.example:PORT`, so a page answers only to a loopback name (or the base
    ///   URL's host) on the base URL's port; no port (a local proxy's `$host`) is taken too,
    ///   as an attacker's DNS name never passes the name test. Every `X-Forwarded-Host` value
    ///   must pass as well: a rebound script may add the header.
    /// - Cross-site form posts (CSRF): a post must come from our own origin. `Origin` decides,
    ///   else `Referer`; `Origin: null` is what a browser sends for our own form under the
    ///   pages' `Referrer-Policy: no-referrer` (Fetch, "serializing a request origin"), so it
    ///   is taken only with `Sec-Fetch-Site: same-origin`, which no page can forge; any other
    ///   `Sec-Fetch-Site` but `none` is refused (`same-site` is another port on this machine).
    /// `action` completes the refusals of posts ("a form post from … cannot <action> here").
    public func refusal(_ source: PageRequestSource, action: String) -> String? {
        guard let base = try? URIReference(parsing: baseURL),
              let baseHost = base.normalizedHost, let basePort = base.effectivePort else { return nil }
        let names = URIAuthority.loopbackNames.union([baseHost])

        func acceptableHost(_ value: String) -> Bool {
            guard let authority = try? URIAuthority(parsing: Self.trimmed(value)), authority.userinfo == nil else {
                return false
            }
            return names.contains(ASCIICase.lowercased(authority.host)) && (authority.port == nil || authority.port == basePort)
        }
        func sameOrigin(_ value: String) -> Bool {
            guard let uri = try? URIReference(parsing: value), uri.userinfo == nil, uri.normalizedScheme == base.normalizedScheme,
                  let host = uri.normalizedHost else { return false }
            return names.contains(host) && uri.effectivePort == basePort
        }

        let hosts = (source.host.map { [$0] } ?? []) + source.forwardedHosts.flatMap { $0.split(separator: ",").map(String.init) }
        if let foreign = hosts.first(where: { !acceptableHost($0) }) {
            return "this page answers only at \(baseURL) (or another loopback name on the same port), not at host \(foreign)"
        }
        guard source.isPost else { return nil }
        let fetchSite = source.fetchSite.map(ASCIICase.lowercased)
        if let fetchSite, fetchSite != "same-origin", fetchSite != "none" {
            return "a form post from another site (Sec-Fetch-Site: \(fetchSite)) cannot \(action) here"
        }
        if let origin = source.origin {
            if origin == "null" {
                if fetchSite != "same-origin" { return "a form post with Origin: null is taken only from this page itself" }
            } else if !sameOrigin(origin) {
                return "a form post from \(origin) cannot \(action) here"
            }
        } else if let referer = source.referer, !sameOrigin(referer) {
            return "a form post from another page cannot \(action) here"
        }
        return nil
    }

    /// Without the optional whitespace around a list element (RFC 9110 §5.6.1).
    private static func trimmed(_ text: String) -> String {
        var value = text[...]
        while value.first == " " || value.first == "\t" { value.removeFirst() }
        while value.last == " " || value.last == "\t" { value.removeLast() }
        return String(value)
    }
}
