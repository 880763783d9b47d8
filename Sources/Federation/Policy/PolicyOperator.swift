/// The standard metadata policy operators of section 6.1.3.1. The case order is the order of
/// application the spec fixes: `value` first, then `add`, `default`, `one_of`, `subset_of`,
/// `superset_of`, and `essential` last.
public enum PolicyOperator: String, CaseIterable, Sendable {
    case value
    case add
    case `default`
    case oneOf = "one_of"
    case subsetOf = "subset_of"
    case supersetOf = "superset_of"
    case essential

    /// Names of the standard operators; anything else is an additional operator (section 6.1.3.2).
    public static let standardNames: Set<String> = Set(allCases.map(\.rawValue))
}
