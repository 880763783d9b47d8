import JSON

/// Domain name constraints as section 6.2.2 borrows them from RFC 5280 section 4.2.1.10 for
/// URIs: they apply to the host of the Entity Identifier. A constraint with a leading period
/// (".example.com") is a domain and matches any host with one or more labels in front of it,
/// but not "example.com" itself; a constraint without one names exactly one host.
enum NamingConstraints {
    /// Validates a `permitted` or `excluded` list: fully qualified domain names, optionally
    /// with a leading period, and nothing URL-like.
    static func names(_ v: JSONValue, _ member: String) throws(ConstraintError) -> [String] {
        guard let names = v.stringArray else { throw .malformed("naming_constraints.\(member) must be an array of strings") }
        for n in names {
            let bare = n.hasPrefix(".") ? n.dropFirst() : Substring(n)
            let labels = bare.split(separator: ".", omittingEmptySubsequences: false)
            guard !bare.isEmpty, labels.allSatisfy({ isLabel($0) }) else {
                throw .malformed("naming_constraints.\(member) entry \"\(n)\" is not a domain name")
            }
        }
        return names
    }

    private static func isLabel(_ l: Substring) -> Bool {
        guard !l.isEmpty, l.utf8.count <= 63, l.first != "-", l.last != "-" else { return false }
        // Letters, digits and hyphens; non-ASCII is let through so IDNs in U-label form still work.
        return l.unicodeScalars.allSatisfy { s in
            s.value > 0x7F || (s.properties.isAlphabetic && s.isASCII) || ("0"..."9").contains(s) || s == "-"
        }
    }

    static func matches(host: String, constraint: String) -> Bool {
        let c = normalize(constraint)
        if c.hasPrefix(".") { return host.hasSuffix(c) && host.count > c.count }
        return host == c
    }

    /// DNS names compare case-insensitively, and a trailing root dot changes nothing.
    static func normalize(_ name: String) -> String {
        var n = name.lowercased()
        if n.hasSuffix(".") && n.count > 1 { n.removeLast() }
        return n
    }

    /// The host of an absolute URL (`scheme://[userinfo@]host[:port][/path…]`), normalized;
    /// nil when there is none.
    static func host(ofURL url: String) -> String? {
        let u = Substring(url)
        // No Foundation here: find "://" by hand.
        guard let colon = u.firstIndex(of: ":"), u[colon...].hasPrefix("://") else { return nil }
        var authority = u[u.index(colon, offsetBy: 3)...]
        if let end = authority.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            authority = authority[..<end]
        }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host: Substring
        if authority.hasPrefix("[") {
            // IP literal: keep the brackets' content; domain constraints can never match it.
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
        } else {
            host = authority
            if let colon = host.lastIndex(of: ":") { host = host[..<colon] }
        }
        guard !host.isEmpty else { return nil }
        return normalize(String(host))
    }
}
