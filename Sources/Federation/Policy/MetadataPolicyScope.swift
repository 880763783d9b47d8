import JSON

/// The OAuth `scope` client metadata parameter is one space-separated string, but policy
/// operators treat it as an array of scope values, and the result is joined back into a string
/// (section 6.1.3.1.8, notes on operators).
enum MetadataPolicyScope {
    static let parameter = "scope"

    /// A string becomes the array of its space-separated values; anything else is unchanged.
    static func split(_ v: JSONValue) -> JSONValue {
        guard let s = v.stringValue else { return v }
        return .array(s.split(separator: " ", omittingEmptySubsequences: true).map { .string(String($0)) })
    }

    /// An array of strings becomes one space-separated string; anything else is unchanged.
    static func join(_ v: JSONValue) -> JSONValue {
        guard let values = v.stringArray else { return v }
        return .string(values.joined(separator: " "))
    }
}
