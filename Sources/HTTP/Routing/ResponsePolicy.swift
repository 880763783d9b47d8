/// The headers a route's answers carry, errors included, chosen by who may read them.
public enum ResponsePolicy: Sendable, Hashable {
    /// Public data any origin may read (federation statements, metadata, JWKS):
    /// `Access-Control-Allow-Origin: *`, and OPTIONS answers a CORS preflight.
    case publicRead
    /// An answer for one client (token, nonce, credential, admin, anything per user):
    /// `Cache-Control: no-store` (RFC 6749 §5.1) and no CORS header.
    case perClient
    /// A browser page: a strict Content-Security-Policy, no sniffing, no referrer, no caching.
    case html

    /// Why there is no `form-action`: Chrome applies form-action to the redirects that follow a
    /// form post, so after the user submits a page the redirect to a wallet's custom-scheme
    /// redirect_uri (e.g. `eudi-openid4ci://`) would be blocked. `default-src 'none'` still
    /// forbids scripts, frames, fetches and plugins.
    static let contentSecurityPolicy =
        "default-src 'none'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"

    /// `response` with this policy's headers added (a header the handler set itself is kept),
    /// plus `X-Content-Type-Options: nosniff` on JSON and JWT answers. Prepare a response after
    /// applying its policy and the router will leave it as it is.
    public func apply(to response: HTTPResponse) -> HTTPResponse {
        if response.appliedPolicy == self || response.isDeferred { return response }
        let reusable = response.reusableUntil
        var out = response
        var added: [(name: String, value: String)] = []
        func add(_ name: String, _ value: String) {
            if !response.hasHeader(name) { added.append((name: name, value: value)) }
        }
        switch self {
        case .publicRead:
            add("Access-Control-Allow-Origin", "*")
        case .perClient:
            add("Cache-Control", "no-store")
        case .html:
            add("Content-Security-Policy", Self.contentSecurityPolicy)
            add("X-Content-Type-Options", "nosniff")
            add("Referrer-Policy", "no-referrer")
            add("Cache-Control", "no-store")
        }
        if self != .html, let type = response.header("content-type"), Self.isStructured(type) {
            add("X-Content-Type-Options", "nosniff")
        }
        if !added.isEmpty { out.headers.append(contentsOf: added) }
        if let reusable { out = out.reusable(until: reusable) }
        out.appliedPolicy = self
        return out
    }

    /// JSON and JWT media types (`application/json`, `+json`, `application/jwt`, `+jwt`): a
    /// browser sniffing them as HTML would run attacker-chosen claim values.
    static func isStructured(_ contentType: String) -> Bool {
        let type = ASCII.mediaType(contentType)
        return type == "application/json" || type == "application/jwt" || type.hasSuffix("+json") || type.hasSuffix("+jwt")
    }
}

extension HTTPResponse {
    /// `policy.apply(to: self)`: e.g. `.jwt(...).applying(.publicRead).prepared()` for an answer
    /// built once and served on a public route.
    public func applying(_ policy: ResponsePolicy) -> HTTPResponse { policy.apply(to: self) }
}
