import Support

extension HTTPResponse {
    /// A redirect to `target` with `parameters` added to its query (percent-encoded), after any
    /// query `target` already has (an OAuth redirect URI may carry one, RFC 6749 §3.1.2) and
    /// before any fragment. 302 after a GET; use `.seeOther` (303) after a POST so the browser
    /// follows with a GET.
    public static func redirect(
        to target: String, adding parameters: [(String, String)] = [], status: HTTPStatus = .found
    ) -> HTTPResponse {
        HTTPResponse(status: status, headers: [(name: "Location", value: URLEncoding.appendingQuery(parameters, to: target))])
    }

    /// An HTML page (UTF-8). Escape every interpolated value with `HTML.escape`; serve it on a
    /// route with the `.html` policy, which adds the Content-Security-Policy.
    public static func html(_ text: String, status: HTTPStatus = .ok) -> HTTPResponse {
        .text(text, status: status, contentType: "text/html; charset=utf-8")
    }
}

public enum HTML {
    /// `text` safe inside element content and inside a quoted attribute value (either quote).
    /// Not for unquoted attributes, URLs in `href`/`src` (check the scheme too), or `<script>`.
    public static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }) else {
            return text
        }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
