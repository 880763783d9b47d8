import JSON

/// DCQL claims against a presented credential (OpenID4VP 1.0 §6.3, §7.1): every requested
/// path must select a value (one of `values` when given), and every disclosure must lie on the
/// way to or inside a requested claim, so a presentation that discloses more than was asked is
/// caught, not just one that lacks a claim.
enum DCQLClaimMatching {
    /// The values `path` selects in `claims` (§7.1: a string selects a member, an integer an
    /// element, null every element of an array).
    static func select(_ path: [DCQLQuery.PathElement], in claims: JSONValue) -> [JSONValue] {
        var current = [claims]
        for element in path {
            var next: [JSONValue] = []
            for value in current {
                switch (element, value) {
                case (.member(let name), .object(let object)): if let v = object[name] { next.append(v) }
                case (.index(let i), .array(let array)): if i < array.count { next.append(array[i]) }
                case (.all, .array(let array)): next += array
                default: break
                }
            }
            current = next
        }
        return current
    }

    /// Whether the disclosure at `disclosed` is covered by the requested `path`: one is a
    /// prefix of the other (an object disclosed to reach a requested member, or a member inside
    /// a requested object), element by element.
    static func covers(_ path: [DCQLQuery.PathElement], _ disclosed: JSONPath) -> Bool {
        for (element, component) in zip(path, disclosed.components) {
            switch (element, component) {
            case (.member(let a), .member(let b)) where a == b: continue
            case (.index(let a), .index(let b)) where a == b: continue
            case (.all, .index): continue
            default: return false
            }
        }
        return true
    }

    /// `address.country`, `nationalities[0]`: a disclosure's place, for a reason.
    static func describe(_ path: JSONPath) -> String {
        path.components.enumerated().map { i, c in
            switch c {
            case .member(let name): i == 0 ? name : "." + name
            case .index(let n): "[\(n)]"
            }
        }.joined()
    }
}
