#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A URI reference split and checked per RFC 3986: the Appendix B split into scheme,
/// authority, path, query and fragment, the authority into `[userinfo@]host[:port]` (§3.2),
/// and every component against its grammar. Nothing is decoded or normalised: a component is
/// kept as written, so a check compares what the client will actually use.
///
/// Stricter than the grammar on purpose, because these strings decide where a browser goes:
/// anything outside the RFC's character set (spaces, tabs, line breaks, `\`, `"`, `<`, `>`,
/// `^`, `` ` ``, `{`, `|`, `}`, non-ASCII) is refused rather than "fixed up" the way WHATWG
/// URL parsers do (they read `\` as `/`, so `http://evil.example\@127.0.0.1/` is a different
/// URL to them than to a naive reader); a port must be at most 65535; an IP literal must be an
/// IPv6 address (RFC 4291) without a zone.
public struct URIReference: Sendable, Equatable {
    /// As written (compare ignoring case, §3.1); nil for a relative reference.
    public let scheme: String?
    /// Everything before the authority's `@`; nil without one.
    public let userinfo: String?
    /// The host as written, an IP literal with its brackets (`[::1]`); nil without an
    /// authority, "" for an empty one (`file:///x`).
    public let host: String?
    /// The port's value; nil when absent or empty (`http://h:/` is allowed by §3.2.3).
    public let port: Int?
    public let path: String
    public let query: String?
    public let fragment: String?

    /// Parses `text`, refusing anything RFC 3986 does not allow (see the type's comment).
    public init(parsing text: String) throws(URIError) {
        let bytes = Array(text.utf8)
        for (offset, byte) in bytes.enumerated() where !Self.isURIByte(byte) {
            throw URIError("character \(Self.describe(byte)) at offset \(offset) is not allowed in a URI")
        }
        try Self.checkPercentEncodings(bytes)

        // Appendix B: ^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?
        var rest = bytes[...]
        if let end = rest.firstIndex(where: { $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }),
           end > rest.startIndex, rest[end] == UInt8(ascii: ":") {
            let name = rest[..<end]
            guard let first = name.first, Self.isAlpha(first),
                  name.allSatisfy({ Self.isAlpha($0) || Self.isDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }) else {
                throw URIError("the scheme \(Self.string(name)) is not ALPHA *( ALPHA / DIGIT / \"+\" / \"-\" / \".\" )")
            }
            scheme = Self.string(name)
            rest = rest[(end + 1)...]
        } else {
            scheme = nil
        }
        if let hash = rest.firstIndex(of: UInt8(ascii: "#")) {
            fragment = Self.string(rest[(hash + 1)...])
            rest = rest[..<hash]
        } else {
            fragment = nil
        }
        if let question = rest.firstIndex(of: UInt8(ascii: "?")) {
            query = Self.string(rest[(question + 1)...])
            rest = rest[..<question]
        } else {
            query = nil
        }
        if rest.starts(with: "//".utf8) {
            let afterSlashes = rest.index(rest.startIndex, offsetBy: 2)
            let end = rest[afterSlashes...].firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
            let authority = try URIAuthority(parsingBytes: rest[afterSlashes..<end])
            (userinfo, host, port) = (authority.userinfo, authority.host, authority.port)
            rest = rest[end...]
        } else {
            (userinfo, host, port) = (nil, nil, nil)
        }
        path = Self.string(rest)

        // §3.3 to §3.5: path, query and fragment characters (gen-delims "[", "]" only in a host).
        for (name, part, extra) in [("path", path, "/"), ("query", query ?? "", "/?"), ("fragment", fragment ?? "", "/?")] {
            for byte in part.utf8 where !(Self.isPChar(byte) || extra.utf8.contains(byte)) {
                throw URIError("character \(Self.describe(byte)) is not allowed in the \(name)")
            }
        }
        // §4.2: a relative reference's first segment may not hold ":" (it would read as a scheme).
        if scheme == nil, host == nil, let firstSegment = path.split(separator: "/", omittingEmptySubsequences: false).first,
           firstSegment.contains(":") {
            throw URIError("the first path segment of a relative reference may not contain \":\"")
        }
    }

    /// An absolute URI (§4.3): a scheme and no fragment.
    public var isAbsolute: Bool { scheme != nil && fragment == nil }

    /// The scheme, lower-cased.
    public var normalizedScheme: String? { scheme.map(ASCIICase.lowercased) }

    /// The host, lower-cased (§3.2.2: hosts compare ignoring case).
    public var normalizedHost: String? { host.map(ASCIICase.lowercased) }

    /// The port, or the scheme's default for `http` (80) and `https` (443).
    public var effectivePort: Int? {
        if let port { return port }
        switch normalizedScheme {
        case "http": return 80
        case "https": return 443
        default: return nil
        }
    }

    /// Whether the host holds a percent-encoding (`%31%32%37.0.0.1`): legal in a reg-name,
    /// but no legitimate redirect needs one, and readers disagree on decoding it.
    public var hostIsPercentEncoded: Bool { host?.utf8.contains(UInt8(ascii: "%")) ?? false }

    /// The host is exactly one of the loopback names RFC 8252 §7.3 and RFC 9700 §2.1 mean:
    /// `127.0.0.1`, `[::1]` or `localhost` (any case). Not `127.0.0.2`, not `localhost.`, not
    /// `localhost.example`, not `127.1`: a host that only looks local may resolve elsewhere.
    public var hasLoopbackHost: Bool { normalizedHost.map(URIAuthority.loopbackNames.contains) ?? false }

    // MARK: Character classes (§2)

    static func isAlpha(_ b: UInt8) -> Bool { (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") }
    static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
    static func isHexDigit(_ b: UInt8) -> Bool { isDigit(b) || ((b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "f")) }
    static func isUnreserved(_ b: UInt8) -> Bool {
        isAlpha(b) || isDigit(b) || b == UInt8(ascii: "-") || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "~")
    }
    static func isSubDelim(_ b: UInt8) -> Bool { "!$&'()*+,;=".utf8.contains(b) }
    /// pchar (§3.3), "%" standing for a checked pct-encoded triplet.
    static func isPChar(_ b: UInt8) -> Bool {
        isUnreserved(b) || isSubDelim(b) || b == UInt8(ascii: ":") || b == UInt8(ascii: "@") || b == UInt8(ascii: "%")
    }
    /// unreserved, reserved or "%": every byte a URI reference can hold.
    static func isURIByte(_ b: UInt8) -> Bool {
        isUnreserved(b) || isSubDelim(b) || ":/?#[]@%".utf8.contains(b)
    }

    static func checkPercentEncodings<C: Collection>(_ bytes: C) throws(URIError) where C.Element == UInt8, C.Index == Int {
        var i = bytes.startIndex
        while i < bytes.endIndex {
            if bytes[i] == UInt8(ascii: "%") {
                guard i + 2 < bytes.endIndex,
                      isHexDigit(bytes[i + 1]), isHexDigit(bytes[i + 2]) else {
                    throw URIError("\"%\" must start a percent-encoding of two hex digits")
                }
                i += 3
            } else {
                i += 1
            }
        }
    }

    static func string<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 { String(decoding: bytes, as: UTF8.self) }

    static func describe(_ byte: UInt8) -> String {
        byte >= 0x21 && byte < 0x7F ? "\"\(Character(Unicode.Scalar(byte)))\"" : "0x" + String(byte, radix: 16, uppercase: true)
    }
}

/// The authority of a URI (RFC 3986 §3.2), or a `Host` header field's value (RFC 9110 §7.2,
/// `uri-host [ ":" port ]`, where `userinfo` must be nil).
public struct URIAuthority: Sendable, Equatable {
    public let userinfo: String?
    public let host: String
    public let port: Int?

    /// The exact loopback hosts (lower-case) RFC 8252 §7.3 names, plus `localhost`.
    public static let loopbackNames: Set<String> = ["127.0.0.1", "[::1]", "localhost"]

    public init(parsing text: String) throws(URIError) {
        let bytes = Array(text.utf8)
        for byte in bytes where !URIReference.isURIByte(byte) || "/?#".utf8.contains(byte) {
            throw URIError("character \(URIReference.describe(byte)) is not allowed in an authority")
        }
        try URIReference.checkPercentEncodings(bytes)
        try self.init(parsingBytes: bytes[...])
    }

    /// `bytes` already hold only URI characters with well-formed percent-encodings.
    init(parsingBytes bytes: ArraySlice<UInt8>) throws(URIError) {
        var rest = bytes
        // §3.2.1: userinfo holds no "@", so a second one is not a URI (a reader taking the
        // first and one taking the last would see different hosts).
        let ats = rest.indices.filter { rest[$0] == UInt8(ascii: "@") }
        guard ats.count <= 1 else { throw URIError("an authority holds at most one \"@\"") }
        if let at = ats.first {
            let info = rest[..<at]
            for byte in info where !(URIReference.isUnreserved(byte) || URIReference.isSubDelim(byte) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "%")) {
                throw URIError("character \(URIReference.describe(byte)) is not allowed in userinfo")
            }
            userinfo = URIReference.string(info)
            rest = rest[(at + 1)...]
        } else {
            userinfo = nil
        }
        let hostBytes: ArraySlice<UInt8>
        if rest.first == UInt8(ascii: "[") {
            // §3.2.2 IP-literal: an IPv6 address in brackets (IPvFuture and RFC 6874 zones refused).
            guard let close = rest.firstIndex(of: UInt8(ascii: "]")) else { throw URIError("an IP literal lacks its \"]\"") }
            let inside = URIReference.string(rest[(rest.startIndex + 1)..<close])
            guard Self.isIPv6(inside) else { throw URIError("[\(inside)] is not an IPv6 address") }
            hostBytes = rest[...close]
            rest = rest[(close + 1)...]
            guard rest.isEmpty || rest.first == UInt8(ascii: ":") else { throw URIError("only a port may follow an IP literal") }
        } else {
            let end = rest.firstIndex(of: UInt8(ascii: ":")) ?? rest.endIndex
            hostBytes = rest[..<end]
            for byte in hostBytes where !(URIReference.isUnreserved(byte) || URIReference.isSubDelim(byte) || byte == UInt8(ascii: "%")) {
                throw URIError("character \(URIReference.describe(byte)) is not allowed in a host")
            }
            rest = rest[end...]
        }
        host = URIReference.string(hostBytes)
        if rest.first == UInt8(ascii: ":") {
            let digits = rest.dropFirst()
            guard digits.allSatisfy(URIReference.isDigit) else { throw URIError("the port must be digits") }
            if digits.isEmpty {
                port = nil
            } else {
                guard digits.count <= 5, let value = Int(URIReference.string(digits)), value <= 65_535 else {
                    throw URIError("the port must be at most 65535")
                }
                port = value
            }
        } else {
            port = nil
        }
    }

    /// The host is one of `loopbackNames` (ignoring case).
    public var hasLoopbackHost: Bool { Self.loopbackNames.contains(ASCIICase.lowercased(host)) }

    static func isIPv6(_ text: String) -> Bool {
        var address = in6_addr()
        return text.withCString { inet_pton(AF_INET6, $0, &address) } == 1
    }
}

public struct URIError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// ASCII-only lower-casing: schemes and hosts compare ignoring ASCII case only (RFC 3986 §6.2.2.1).
public enum ASCIICase {
    public static func lowercased(_ text: String) -> String {
        String(decoding: text.utf8.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }, as: UTF8.self)
    }
}
