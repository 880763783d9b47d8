import JSON

/// The allowed operator combinations of section 6.1.3.1. They hold for every policy as
/// published and again for every merged policy (section 6.1.4.1).
extension PolicyOperatorSet {
    func checkCombinations(parameter: String) throws(MetadataPolicyError) {
        typealias V = PolicyOperatorValues
        func illegal(_ pair: String, _ why: String) -> MetadataPolicyError {
            .invalidPolicy("\(parameter): illegal \(pair) combination: \(why)")
        }

        if let value {
            // Operators that compare sets need `value` to be an array; `null` has no values.
            let values = value.arrayValue
            if let add, !(values.map { V.isSubset(add, of: $0) } ?? false) {
                throw illegal("value / add", "the values of add must be a subset of value")
            }
            if defaultValue != nil, value.isNull {
                throw illegal("value / default", "value must not be null")
            }
            if let oneOf, !V.contains(oneOf, value) {
                throw illegal("value / one_of", "value must be among the one_of values")
            }
            if let subsetOf, !(values.map { V.isSubset($0, of: subsetOf) } ?? false) {
                throw illegal("value / subset_of", "value must be a subset of subset_of")
            }
            if let supersetOf, !(values.map { V.isSubset(supersetOf, of: $0) } ?? false) {
                throw illegal("value / superset_of", "value must be a superset of superset_of")
            }
            if essential == true, value.isNull {
                throw illegal("value / essential", "value must not be null when essential is true")
            }
        }
        if oneOf != nil {
            // one_of combines only with value, default and essential.
            if add != nil { throw illegal("one_of / add", "not allowed") }
            if subsetOf != nil { throw illegal("one_of / subset_of", "not allowed") }
            if supersetOf != nil { throw illegal("one_of / superset_of", "not allowed") }
        }
        if let add, let subsetOf, !V.isSubset(add, of: subsetOf) {
            throw illegal("add / subset_of", "the values of add must be a subset of subset_of")
        }
        if let subsetOf, let supersetOf, !V.isSubset(supersetOf, of: subsetOf) {
            throw illegal("subset_of / superset_of", "subset_of must be a superset of superset_of")
        }
    }
}
