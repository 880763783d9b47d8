/// `error_description` may hold only the characters RFC 6749 §5.2 allows: %x20-21 / %x23-5B /
/// %x5D-7E (printable ASCII without `"` and `\`). Descriptions often quote client input (a
/// parameter, a JSON member name, a URL), so every rendered error passes through here: the
/// JSON body (`HTTPResponse.error`), the redirect of an authorization error
/// (`RedirectedError`), and the `WWW-Authenticate` challenge, where an unescaped `"` or `\`
/// would also break the quoted-string (RFC 9110 §5.6.4).
public enum ErrorDescription {
    /// `text` with each disallowed character replaced: `"` by `'`, `\` by `/`, a control
    /// character (newline, tab, ...) by a space, anything outside ASCII by `?`. Replacing
    /// rather than dropping keeps the description's shape readable.
    public static func sanitized(_ text: String) -> String {
        if text.utf8.allSatisfy(isAllowed) { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x22: out.append("'")
            case 0x5C: out.append("/")
            case 0x20...0x7E: out.append(scalar)
            case 0..<0x20, 0x7F: out.append(" ")
            default: out.append("?")
            }
        }
        return String(out)
    }

    /// True for a byte RFC 6749 §5.2 allows in `error_description`.
    public static func isAllowed(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte <= 0x7E && byte != 0x22 && byte != 0x5C
    }
}
