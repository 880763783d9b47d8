import Foundation
import JSON

/// What the entity, statement and check pages share: how a JWT is shown (claims, header, times
/// in human form, the endpoint that served it, and the raw JWT to copy without JavaScript), key
/// tables, links, and the error page. The pieces are Mustache text spliced into each page's
/// template (sections switch the context to the piece's dictionary), because only `Pages`
/// knows Mustache; every value still goes through `{{escaping}}`.
enum StatementView {
    /// Wider content stays inside the layout's 40rem column: tables and JSON scroll sideways.
    static let style = """
        <style>
        .scroll{overflow-x:auto;max-width:100%}
        pre{margin:.25rem 0;padding:.5rem;background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;font:13px/1.4 ui-monospace,Menlo,Consolas,monospace;white-space:pre}
        textarea{width:100%;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;word-break:break-all}
        table{border-collapse:collapse;font-size:.9rem}th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #d0d7de;vertical-align:top}
        .badge{display:inline-block;padding:0 .4rem;border-radius:1rem;font-size:.8rem;font-weight:600;border:1px solid #d0d7de}
        .ok,.active{background:#dafbe1;color:#116329}.problem,.revoked,.invalid{background:#ffebe9;color:#a40e26}.expired{background:#fff8c5;color:#7d4e00}
        h3{font-size:1rem;margin:1rem 0 .25rem}
        nav.pages{display:flex;gap:1rem;margin:.5rem 0}
        </style>

        """

    /// A JWT: the context is `jwt(_:baseURL:)`.
    static let jwtBlock = """
        <div class="scroll"><pre>{{claims}}</pre></div>
        {{#hasTimes}}<dl>{{#times}}<dt>{{claim}}</dt><dd>{{seconds}} = {{human}}</dd>{{/times}}</dl>{{/hasTimes}}
        <details><summary>header</summary><div class="scroll"><pre>{{header}}</pre></div></details>
        <details><summary>raw JWT</summary><textarea readonly rows="5" aria-label="raw JWT">{{compact}}</textarea></details>
        {{#served}}<p class="muted">served by \(linkText)</p>{{/served}}

        """

    /// A link in context `link(_:baseURL:)`: an `<a>` for http(s), the text otherwise.
    static let linkText = """
        {{#href}}<a href="{{href}}" rel="noopener noreferrer">{{text}}</a>{{#external}} <span class="muted">↗ external</span>{{/external}}{{/href}}{{^href}}<code>{{text}}</code>{{/href}}
        """

    /// A key table in context `["keys": keyRows(...)]`.
    static let keyTable = """
        <div class="scroll"><table><tr><th>kid</th><th>kty</th><th>crv</th><th>alg</th><th>use</th></tr>
        {{#keys}}<tr><td><code>{{kid}}</code></td><td>{{kty}}</td><td>{{crv}}</td><td>{{alg}}</td><td>{{use}}</td></tr>{{/keys}}
        </table></div>

        """

    static func jwt(_ jwt: DecodedJWT, baseURL: String) -> [String: Any] {
        [
            "claims": ExplorerPage.pretty(jwt.claims),
            "header": ExplorerPage.pretty(jwt.header),
            "compact": jwt.compact,
            "hasTimes": !jwt.times.isEmpty,
            "times": jwt.times.map { ["claim": $0.claim, "seconds": String($0.seconds), "human": ExplorerPage.humanTime($0.seconds)] },
            "served": jwt.servedBy.map { link($0, baseURL: baseURL) } ?? false,
        ]
    }

    static func link(_ url: String, baseURL: String) -> [String: Any] {
        guard let l = ExplorerPage.link(url, baseURL: baseURL) else { return ["text": visible(url), "href": false, "external": false] }
        return ["text": visible(url), "href": l.href, "external": l.external]
    }

    /// An entity ID as a link to its explorer page, marked when it is not under this server.
    static func entity(_ id: String, baseURL: String) -> [String: Any] {
        ["id": visible(id), "href": ExplorerPage.entityHref(id), "external": ExplorerPage.link(id, baseURL: baseURL)?.external ?? true]
    }

    static let entityLink = """
        <a href="{{href}}">{{id}}</a>{{#external}} <span class="muted">(another server)</span>{{/external}}
        """

    static func keyRows(_ rows: [KeyRow]) -> [[String: Any]] {
        rows.map { ["kid": visible($0.kid), "kty": visible($0.kty), "crv": visible($0.crv), "alg": visible($0.alg), "use": visible($0.use)] }
    }

    /// Text as shown: control characters (which a remote statement may carry in any string, and
    /// which HTML escaping leaves alone) written as `\u{…}` so they can be seen, not obeyed.
    static func visible(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) { out += "\\u{" + String(scalar.value, radix: 16) + "}" } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }

    private static func isControl(_ s: Unicode.Scalar) -> Bool {
        s.value < 0x20 || (0x7F...0x9F).contains(s.value) || s.properties.generalCategory == .format && s.value != 0x200D
    }

    /// Human time of an optional claim, or an empty string.
    static func time(_ seconds: Int64?) -> String { seconds.map { ExplorerPage.humanTime($0) } ?? "" }

    private static let failurePage = ExplorerPage(style + """
        <p class="error">{{message}}</p>
        <form method="get" action="/explorer/entity"><p><label for="id">Entity ID</label>
        <input type="text" id="id" name="id" value="{{id}}" placeholder="https://…"></p>
        <p><button type="submit">Show entity</button></p></form>
        <p><a href="/">Back to the federation</a></p>

        """)

    /// The page for a failure: what is wrong, and a form to try another entity ID.
    static func failure(_ failure: ExplorerFailure, id: String?) -> String {
        failurePage.render(title: failure.title, context: ["message": visible(failure.message), "id": visible(id ?? "")])
    }
}
