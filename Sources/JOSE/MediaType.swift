/// `typ` / `cty` comparison per RFC 7515 §4.1.9: media types are case-insensitive, and a value
/// without "/" stands for "application/" + value.
enum MediaType {
    static func matches(_ actual: String, _ expected: String) -> Bool {
        // Byte-equal values match whatever their form: the usual case (a wallet's proof carries
        // the `typ` as specified) then needs no lower-cased copies on every proof checked
        // (measured: see docs/performance.md).
        // Bytes, not String `==`, which would also equate canonically equivalent non-ASCII
        // (U+212A KELVIN SIGN and "K") where the byte comparison below does not.
        actual.utf8.elementsEqual(expected.utf8) || normalized(actual) == normalized(expected)
    }

    /// ASCII lower case, compared as bytes: media types are ASCII tokens (RFC 6838 §4.2), so
    /// nothing needs Unicode-aware String operations (Foundation's `contains` on a String is far
    /// slower, and a DPoP flow checks several `typ`s; measured: see docs/performance.md).
    private static func normalized(_ value: String) -> [UInt8] {
        let lower = value.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
        return lower.contains(UInt8(ascii: "/")) ? lower : Array("application/".utf8) + lower
    }
}
