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
    ///
    /// The headers come from lists built once per policy, and the checks read bytes without
    /// building strings, not added one by one with a lower-cased copy of the media type on
    /// every answer (measured: see docs/performance.md).
    public func apply(to response: consuming HTTPResponse) -> HTTPResponse {
        if response.appliedPolicy == self || response.isDeferred { return response }
        let reusable = response.reusableUntil
        let added = self != .html && Self.isStructured(response) ? headersWithNosniff : headers
        // Usually the handler set none of them, and the whole list goes in at once.
        if response.headers.contains(where: { own in added.contains { ASCII.equalsIgnoringCase($0.name, own.name) } }) {
            let own = response.headers
            response.headers.append(contentsOf: added.filter { header in !own.contains { ASCII.equalsIgnoringCase($0.name, header.name) } })
        } else {
            response.headers.append(contentsOf: added)
        }
        if let reusable { response = response.reusable(until: reusable) }
        response.appliedPolicy = self
        return response
    }

    /// The policy's own headers, in the order they are sent.
    var headers: [(name: String, value: String)] {
        switch self {
        case .publicRead: return Self.publicReadHeaders
        case .perClient: return Self.perClientHeaders
        case .html: return Self.htmlHeaders
        }
    }

    /// The same followed by `X-Content-Type-Options: nosniff`, for JSON and JWT answers.
    private var headersWithNosniff: [(name: String, value: String)] {
        switch self {
        case .publicRead: return Self.publicReadStructuredHeaders
        case .perClient: return Self.perClientStructuredHeaders
        case .html: return Self.htmlHeaders
        }
    }

    private static let nosniff = (name: "X-Content-Type-Options", value: "nosniff")
    private static let publicReadHeaders = [(name: "Access-Control-Allow-Origin", value: "*")]
    private static let publicReadStructuredHeaders = publicReadHeaders + [nosniff]
    private static let perClientHeaders = [(name: "Cache-Control", value: "no-store")]
    private static let perClientStructuredHeaders = perClientHeaders + [nosniff]
    private static let htmlHeaders = [
        (name: "Content-Security-Policy", value: contentSecurityPolicy), nosniff,
        (name: "Referrer-Policy", value: "no-referrer"), (name: "Cache-Control", value: "no-store"),
    ]

    /// Whether the response's Content-Type is JSON or a JWT.
    static func isStructured(_ response: HTTPResponse) -> Bool {
        guard let type = response.header("content-type") else { return false }
        return isStructured(type)
    }

    /// JSON and JWT media types (`application/json`, `+json`, `application/jwt`, `+jwt`): a
    /// browser sniffing them as HTML would run attacker-chosen claim values.
    static func isStructured(_ contentType: String) -> Bool {
        var contentType = contentType
        return contentType.withUTF8 { value in
            let type = ASCII.mediaType(value)
            return ASCII.hasSuffixIgnoringCase(type, "+json") || ASCII.hasSuffixIgnoringCase(type, "+jwt")
                || (type.count == 16 && ASCII.hasSuffixIgnoringCase(type, "application/json"))
                || (type.count == 15 && ASCII.hasSuffixIgnoringCase(type, "application/jwt"))
        }
    }
}

extension HTTPResponse {
    /// `policy.apply(to: self)`: e.g. `.jwt(...).applying(.publicRead).prepared()` for an answer
    /// built once and served on a public route.
    public func applying(_ policy: ResponsePolicy) -> HTTPResponse { policy.apply(to: self) }
}
