import JSON

/// Operator value merges of section 6.1.3.1, superior first: a subordinate may only narrow
/// what its superiors set, never relax it.
extension PolicyOperatorSet {
    func merged(withSubordinate sub: PolicyOperatorSet, parameter: String) throws(MetadataPolicyError) -> PolicyOperatorSet {
        typealias V = PolicyOperatorValues
        var out = self

        if let s = sub.value {
            if let v = value, !V.equal(v, s) {
                throw .invalidPolicy("\(parameter): value mismatch between superior and subordinate")
            }
            out.value = value ?? s
        }
        if let s = sub.add { out.add = add.map { V.union($0, s) } ?? s }
        if let s = sub.defaultValue {
            if let d = defaultValue, !V.equal(d, s) {
                throw .invalidPolicy("\(parameter): default mismatch between superior and subordinate")
            }
            out.defaultValue = defaultValue ?? s
        }
        if let s = sub.oneOf {
            let merged = oneOf.map { V.intersection($0, s) } ?? s
            guard !merged.isEmpty else {
                throw .invalidPolicy("\(parameter): one_of values of superior and subordinate do not intersect")
            }
            out.oneOf = merged
        }
        // An empty subset_of intersection is allowed: it empties the parameter (section 6.1.3.1.5).
        if let s = sub.subsetOf { out.subsetOf = subsetOf.map { V.intersection($0, s) } ?? s }
        if let s = sub.supersetOf { out.supersetOf = supersetOf.map { V.union($0, s) } ?? s }
        if let s = sub.essential { out.essential = (essential ?? false) || s }

        try out.checkCombinations(parameter: parameter)
        return out
    }
}
