import Foundation
import JSON

/// The statement page (`/explorer/statement?iss=&sub=`): what a superior says about one of its
/// subordinates (section 3.1.3 and 6): the keys it vouches for, the metadata policy and
/// constraints it imposes on everything below, and whether the superior signed it.
enum StatementPage {
    typealias V = StatementView

    private static let page = ExplorerPage(V.style + """
        <dl>
        <dt>issuer (superior)</dt><dd>{{#issuer}}\(V.entityLink){{/issuer}}</dd>
        <dt>subject</dt><dd>{{#subject}}\(V.entityLink){{/subject}}</dd>
        <dt>signature</dt><dd>{{#signature}}<span class="badge {{class}}">{{verdict}}</span> {{detail}}{{/signature}}</dd>
        </dl>

        <h2>metadata_policy</h2>
        {{#policy}}<div class="scroll"><pre>{{.}}</pre></div>{{/policy}}{{^policy}}<p class="muted">None.</p>{{/policy}}
        {{#crit}}<p>metadata_policy_crit: <code>{{.}}</code></p>{{/crit}}
        <h2>constraints</h2>
        {{#constraints}}<div class="scroll"><pre>{{.}}</pre></div>{{/constraints}}{{^constraints}}<p class="muted">None.</p>{{/constraints}}
        {{#metadata}}<h2>metadata</h2><div class="scroll"><pre>{{.}}</pre></div>{{/metadata}}
        <h2>Keys the superior vouches for (jwks)</h2>
        \(V.keyTable)
        <h2>The statement</h2>
        {{#statement}}\(V.jwtBlock){{/statement}}

        """)

    static func render(_ view: SubordinateStatementView, baseURL: String) -> String {
        let context: [String: Any] = [
            "issuer": V.entity(view.issuer, baseURL: baseURL),
            "subject": V.entity(view.subject, baseURL: baseURL),
            "signature": ["class": view.signature.verifies ? "ok" : "problem",
                          "verdict": view.signature.verifies ? "verifies" : "does not verify", "detail": V.visible(view.signature.detail)],
            "policy": view.metadataPolicy.map(ExplorerPage.pretty) ?? false,
            "crit": view.metadataPolicyCrit.map(V.visible),
            "constraints": view.constraints.map(ExplorerPage.pretty) ?? false,
            "metadata": view.metadata.map(ExplorerPage.pretty) ?? false,
            "keys": V.keyRows(view.keys),
            "statement": V.jwt(view.jwt, baseURL: baseURL),
        ]
        return page.render(title: "Subordinate statement", context: context)
    }
}
