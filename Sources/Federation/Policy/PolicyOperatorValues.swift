import JSON

/// Set operations over JSON arrays as the policy operators use them. Membership uses
/// `jsonEquals`, so `1` and `1.0` are the same value. Results keep the order of the first
/// operand: the spec leaves the order of merged values undefined (section 6.1.3), and keeping
/// the superior's (or the metadata's) order makes results deterministic.
enum PolicyOperatorValues {
    static func contains(_ values: [JSONValue], _ element: JSONValue) -> Bool {
        values.contains { $0.jsonEquals(element) }
    }

    static func isSubset(_ a: [JSONValue], of b: [JSONValue]) -> Bool {
        a.allSatisfy { contains(b, $0) }
    }

    /// `a` followed by the members of `b` not already in it.
    static func union(_ a: [JSONValue], _ b: [JSONValue]) -> [JSONValue] {
        var out = a
        for v in b where !contains(out, v) { out.append(v) }
        return out
    }

    /// Members of `a` (in `a`'s order, without repeats) that are also in `b`.
    static func intersection(_ a: [JSONValue], _ b: [JSONValue]) -> [JSONValue] {
        var out: [JSONValue] = []
        for v in a where contains(b, v) && !contains(out, v) { out.append(v) }
        return out
    }

    /// Equality for `value` and `default` merges. Arrays compare as sets, because the
    /// parameters they hold (grant_types, response_types, ...) are sets and a superior listing
    /// the same values in another order is no conflict.
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        if case .array(let x) = a, case .array(let y) = b {
            return isSubset(x, of: y) && isSubset(y, of: x)
        }
        return a.jsonEquals(b)
    }
}
