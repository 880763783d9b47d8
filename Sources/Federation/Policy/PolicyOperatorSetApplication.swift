import JSON

/// Applies the operators to one metadata parameter in the order section 6.1.3.1 fixes.
extension PolicyOperatorSet {
    /// `current` is the parameter's value, nil when absent; returns nil to leave it absent.
    /// `step`, when given, sees the value after each operator present (a trace watching the
    /// order of section 6.1.4.2; it changes nothing).
    func apply(to current: JSONValue?, parameter: String,
               step: ((PolicyOperator, JSONValue?) -> Void)? = nil) throws(MetadataPolicyError) -> JSONValue? {
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

        if let value {
            result = value.isNull ? Optional.none : Optional.some(value)
            step?(.value, result)
        }
        if let add {
            // Values already present are not added again; an absent parameter starts as `add`.
            if let r = result { result = .array(V.union(try array(r, for: .add), add)) } else { result = .array(add) }
            step?(.add, result)
        }
        if let defaultValue {
            if result == nil { result = defaultValue }
            step?(.default, result)
        }
        if let oneOf {
            if let r = result, !V.contains(oneOf, r) { throw failed(.oneOf) }
            step?(.oneOf, result)
        }
        if let subsetOf {
            // The intersection may be empty; the parameter then stays present as [].
            if let r = result { result = .array(V.intersection(try array(r, for: .subsetOf), subsetOf)) }
            step?(.subsetOf, result)
        }
        if let supersetOf {
            if let r = result, !V.isSubset(supersetOf, of: try array(r, for: .supersetOf)) { throw failed(.supersetOf) }
            step?(.supersetOf, result)
        }
        if let essential {
            if essential, result == nil { throw failed(.essential) }
            step?(.essential, result)
        }
        return result
    }
}
