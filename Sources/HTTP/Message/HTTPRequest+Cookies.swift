/// Cookies (RFC 6265), for the browser pages of the issuer (a login session, a consent step).
/// Values should be opaque tokens (base64url): cookie values allow no spaces, quotes, commas,
/// semicolons or backslashes (RFC 6265 §4.1.1), and nothing here encodes them.
public struct Cookie: Sendable, Equatable {
    public enum SameSite: String, Sendable { case lax = "Lax", strict = "Strict", none = "None" }

    public var name: String
    public var value: String
    public var path: String
    /// Seconds; 0 deletes the cookie, nil makes it a session cookie.
    public var maxAge: Int?
    public var httpOnly: Bool
    public var sameSite: SameSite

    public init(name: String, value: String, path: String = "/", maxAge: Int? = nil, httpOnly: Bool = true,
                sameSite: SameSite = .lax) {
        self.name = name
        self.value = value
        self.path = path
        self.maxAge = maxAge
        self.httpOnly = httpOnly
        self.sameSite = sameSite
    }

    /// The Set-Cookie value. `secure` adds `Secure`; SameSite=None always gets it, because
    /// browsers drop a SameSite=None cookie without it.
    public func headerValue(secure: Bool) -> String {
        precondition(Self.isValid(name: name) && Self.isValid(value: value), "cookie \(name) has characters RFC 6265 forbids")
        var text = name + "=" + value
        text += "; Path=" + path
        if let maxAge { text += "; Max-Age=\(maxAge)" }
        if secure || sameSite == .none { text += "; Secure" }
        if httpOnly { text += "; HttpOnly" }
        text += "; SameSite=" + sameSite.rawValue
        return text
    }

    /// A token (RFC 9110 §5.6.2).
    static func isValid(name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { b in
            b > 0x20 && b < 0x7F && !"()<>@,;:\\\"/[]?={}".utf8.contains(b)
        }
    }

    /// cookie-octets (RFC 6265 §4.1.1).
    static func isValid(value: String) -> Bool {
        value.utf8.allSatisfy { b in b == 0x21 || (0x23...0x2B).contains(b) || (0x2D...0x3A).contains(b)
            || (0x3C...0x5B).contains(b) || (0x5D...0x7E).contains(b) }
    }
}

extension HTTPRequest {
    /// The `Cookie` header's pairs by name (the first of a repeated name wins, as the most
    /// specific path comes first, RFC 6265 §5.4). Malformed pairs are skipped.
    public var cookies: [String: String] {
        guard let header = header("cookie") else { return [:] }
        var cookies: [String: String] = [:]
        // Repeated Cookie fields were joined with ", " by the server; split on both.
        for part in header.split(whereSeparator: { $0 == ";" || $0 == "," }) {
            let pair = part.trimmingSpaces
            guard let equals = pair.firstIndex(of: "=") else { continue }
            let name = pair[..<equals].trimmingSpaces
            var value = pair[pair.index(after: equals)...].trimmingSpaces
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
            guard !name.isEmpty, cookies[String(name)] == nil else { continue }
            cookies[String(name)] = String(value)
        }
        return cookies
    }
}

extension HTTPResponse {
    /// Adds `Set-Cookie`, `Secure` when the request came over https (`HTTPRequest.isSecure`).
    public func setting(cookie: Cookie, for request: HTTPRequest) -> HTTPResponse {
        setting(cookie: cookie, secure: request.isSecure)
    }

    /// Adds `Set-Cookie`; `secure` as the caller knows it (e.g. the base URL is https).
    public func setting(cookie: Cookie, secure: Bool) -> HTTPResponse {
        adding(header: "Set-Cookie", cookie.headerValue(secure: secure))
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}
