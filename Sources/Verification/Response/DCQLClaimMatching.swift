import JSON

/// DCQL claims against a presented credential (OpenID4VP 1.0 §6.3, §7.1): every requested
/// path must select a value (one of `values` when given), and every disclosure must lie on the
/// way to or inside a requested claim, so a presentation that discloses more than was asked is
/// caught, not just one that lacks a claim.
enum DCQLClaimMatching {
    /// Whether a presentation answers `query`'s claims (§6.3, §6.4.1): for one of its claim
    /// options, tried in the query's order, every requested claim is present (with one of its
    /// `values`) and nothing outside it is disclosed. `claims` holds the disclosed values
    /// (for an mdoc `{namespace: {element: value}}`), `disclosed` where each disclosure lies.
    /// Returns the detail for the report: which option matched, or why none did.
    static func check(_ query: DCQLQuery.CredentialQuery, claims: JSONValue, disclosed: [JSONPath]) -> (ok: Bool, detail: String) {
        guard let options = query.claimOptions else {
            return (true, "the query asks for every claim; \(disclosed.count) disclosed")
        }
        var reasons: [String] = []
        for (index, requested) in options.enumerated() {
            if let reason = mismatch(requested, claims: claims, disclosed: disclosed) {
                reasons.append(options.count > 1 ? "claim set \(index + 1): \(reason)" : reason)
                continue
            }
            let option = options.count > 1 ? "claim set \(index + 1) of \(options.count); " : ""
            return (true, "\(option)requested: \(requested.map(\.pathDescription).joined(separator: ", ")); nothing else disclosed")
        }
        return (false, (options.count > 1 ? "no claim set is answered: " : "") + reasons.joined(separator: "; "))
    }

    private static func mismatch(_ requested: [DCQLQuery.ClaimQuery], claims: JSONValue, disclosed: [JSONPath]) -> String? {
        for claim in requested {
            let found = select(claim.path, in: claims)
            guard !found.isEmpty else { return "requested claim \(claim.pathDescription) is missing from the presentation" }
            if let values = claim.values, !found.allSatisfy({ values.contains($0) }) {
                return "claim \(claim.pathDescription) is not one of the requested values"
            }
        }
        if let extra = disclosed.first(where: { place in !requested.contains { covers($0.path, place) } }) {
            return "discloses \(describe(extra)), which the query did not ask for"
        }
        return nil
    }

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
