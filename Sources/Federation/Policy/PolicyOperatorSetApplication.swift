import JSON

/// Applies the operators to one metadata parameter in the order section 6.1.3.1 fixes.
extension PolicyOperatorSet {
    /// `current` is the parameter's value, nil when absent; returns nil to leave it absent.
    func apply(to current: JSONValue?, parameter: String) throws(MetadataPolicyError) -> JSONValue? {
        typealias V = PolicyOperatorValues
        func failed(_ op: PolicyOperator) -> MetadataPolicyError {
            .invalidMetadata("\(parameter): failed \(op.rawValue) check")
        }
        func array(_ v: JSONValue, for op: PolicyOperator) throws(MetadataPolicyError) -> [JSONValue] {
            guard let a = v.arrayValue else {
                throw .invalidMetadata("\(parameter): \(op.rawValue) needs an array, the parameter is a \(v.typeName)")
            }
            return a
        }

        // A null parameter is treated as absent: no operator may output null (section 6.1.3).
        // (Spelled out with `Optional.none`: JSONValue is ExpressibleByNilLiteral, so a bare
        // `nil` in a ternary would become `.null`.)
        var result: JSONValue? = Optional.none
        if let current, !current.isNull { result = current }

        if let value { result = value.isNull ? Optional.none : Optional.some(value) }
        if let add {
            // Values already present are not added again; an absent parameter starts as `add`.
            if let r = result { result = .array(V.union(try array(r, for: .add), add)) } else { result = .array(add) }
        }
        if result == nil, let defaultValue { result = defaultValue }
        if let oneOf, let r = result, !V.contains(oneOf, r) { throw failed(.oneOf) }
        if let subsetOf, let r = result {
            // The intersection may be empty; the parameter then stays present as [].
            result = .array(V.intersection(try array(r, for: .subsetOf), subsetOf))
        }
        if let supersetOf, let r = result, !V.isSubset(supersetOf, of: try array(r, for: .supersetOf)) {
            throw failed(.supersetOf)
        }
        if essential == true, result == nil { throw failed(.essential) }
        return result
    }
}
