/// `typ` / `cty` comparison per RFC 7515 §4.1.9: media types are case-insensitive, and a value
/// without "/" stands for "application/" + value.
enum MediaType {
    static func matches(_ actual: String, _ expected: String) -> Bool {
        normalized(actual) == normalized(expected)
    }

    private static func normalized(_ value: String) -> String {
        let lower = String(decoding: value.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
        return lower.contains("/") ? lower : "application/" + lower
    }
}
