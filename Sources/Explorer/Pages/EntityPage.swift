import Foundation
import JSON

/// The entity page (`/explorer/entity?id=`): one entity as a relying party sees it, section by
/// section of its entity configuration, with what the explorer found out (signature, trust mark
/// status) next to what the statement says.
enum EntityPage {
    typealias V = StatementView

    private static let page = ExplorerPage(V.style + """
        <dl>
        <dt>entity ID</dt><dd><code>{{entityID}}</code>{{#remote}} <span class="muted">↗ another server, fetched under the fetch allow-list</span>{{/remote}}</dd>
        <dt>signature</dt><dd>{{#signature}}<span class="badge {{class}}">{{verdict}}</span> {{detail}}{{/signature}}</dd>
        </dl>
        <p><a href="{{checkHref}}">Check this entity</a> (what <code>trustbed check</code> reports)</p>
        {{#hasNotes}}<ul>{{#notes}}<li class="error">{{.}}</li>{{/notes}}</ul>{{/hasNotes}}

        <h2>Entity configuration</h2>
        {{#configuration}}\(V.jwtBlock){{/configuration}}

        <h2>Keys (jwks)</h2>
        \(V.keyTable)
        <h2>Superiors (authority_hints)</h2>
        {{#hasHints}}<ul>{{#hints}}<li>\(V.entityLink){{#statementHref}} · <a href="{{statementHref}}">its statement about this entity</a>{{/statementHref}}</li>{{/hints}}</ul>{{/hasHints}}
        {{^hasHints}}<p class="muted">None: a Trust Anchor or a standalone entity.</p>{{/hasHints}}

        <h2>Metadata</h2>
        {{#metadata}}<h3 id="metadata-{{type}}">{{type}}</h3><div class="scroll"><pre>{{json}}</pre></div>{{/metadata}}
        {{^metadata}}<p class="muted">No metadata.</p>{{/metadata}}

        <h2>Trust marks</h2>
        {{#marks}}<section class="trust-mark">
        <h3>{{type}}</h3>
        <p><span class="badge {{status}} trust-mark-status">{{status}}</span> {{reason}}</p>
        <p class="muted">issued by {{#issuer}}\(V.entityLink){{/issuer}}</p>
        {{#jwt}}\(V.jwtBlock){{/jwt}}
        {{#delegation}}<h3>delegation</h3>\(V.jwtBlock){{/delegation}}
        </section>{{/marks}}
        {{#revoked}}<section class="trust-mark"><h3>{{type}}</h3>
        <p><span class="badge revoked trust-mark-status">revoked</span> by {{issuer}} at {{at}}{{#reason}}: {{reason}}{{/reason}};
        no longer in the entity configuration.</p></section>{{/revoked}}
        {{^hasMarks}}<p class="muted">None.</p>{{/hasMarks}}

        {{#subordinates}}<h2 id="subordinates">Subordinates</h2>
        <p>{{first}}–{{last}} of {{total}} (from {{source}})</p>
        <div class="scroll"><table><tr><th>entity</th><th>subordinate statement</th><th>exp</th></tr>
        {{#rows}}<tr><td>\(V.entityLink)</td><td><a href="{{statementHref}}">statement</a>{{#policy}} · metadata_policy{{/policy}}{{#constraints}} · constraints{{/constraints}}{{#problem}} <span class="error">{{problem}}</span>{{/problem}}</td><td>{{exp}}</td></tr>{{/rows}}
        </table></div>
        <nav class="pages">{{#previous}}<a href="{{.}}" rel="prev">← previous {{size}}</a>{{/previous}}{{#next}}<a href="{{.}}" rel="next">next {{size}} →</a>{{/next}}</nav>
        {{/subordinates}}

        <h2>Historical keys</h2>
        {{#historical}}
        {{#hasKeys}}<div class="scroll"><table><tr><th>kid</th><th>kty</th><th>exp</th><th>revoked</th><th>reason</th></tr>
        {{#keys}}<tr class="historical-key"><td><code>{{kid}}</code></td><td>{{kty}}</td><td>{{exp}}</td><td>{{revokedAt}}</td><td>{{reason}}</td></tr>{{/keys}}
        </table></div>{{/hasKeys}}
        {{^hasKeys}}<p class="muted">No retired or revoked keys.</p>{{/hasKeys}}
        {{#jwt}}\(V.jwtBlock){{/jwt}}
        {{/historical}}
        {{^historical}}<p class="muted">No historical keys endpoint.</p>{{/historical}}

        """)

    static func render(_ view: EntityView, baseURL: String) -> String {
        let id = view.entityID
        var hints: [[String: Any]] = []
        for hint in view.authorityHints {
            var h = V.entity(hint, baseURL: baseURL)
            h["statementHref"] = statementHref(issuer: hint, subject: id)
            hints.append(h)
        }
        let marks: [[String: Any]] = view.trustMarks.map { m in
            [
                "type": V.visible(m.type), "status": m.status.status.rawValue, "reason": V.visible(m.status.reason),
                "issuer": V.entity(m.issuer, baseURL: baseURL),
                "jwt": m.jwt.map { V.jwt($0, baseURL: baseURL) } ?? false,
                "delegation": m.delegation.map { V.jwt($0, baseURL: baseURL) } ?? false,
            ]
        }
        let revoked: [[String: Any]] = view.revokedMarks.map {
            ["type": V.visible($0.type), "issuer": V.visible($0.issuer), "at": ExplorerPage.humanTime($0.revokedAt), "reason": V.visible($0.reason)]
        }
        var context: [String: Any] = [
            "entityID": V.visible(id),
            "remote": !view.hosted,
            "signature": ["class": view.signature.verifies ? "ok" : "problem",
                          "verdict": view.signature.verifies ? "verifies" : "does not verify", "detail": V.visible(view.signature.detail)],
            "checkHref": "/explorer/check?id=" + ExplorerPage.queryEscaped(id),
            "hasNotes": !view.notes.isEmpty, "notes": view.notes.map(V.visible),
            "configuration": V.jwt(view.configuration, baseURL: baseURL),
            "keys": V.keyRows(view.keys),
            "hasHints": !hints.isEmpty, "hints": hints,
            "metadata": view.metadata.map { ["type": V.visible($0.type), "json": ExplorerPage.pretty($0.value)] },
            "marks": marks, "revoked": revoked, "hasMarks": !marks.isEmpty || !revoked.isEmpty,
            "subordinates": view.subordinates.map { subordinates($0, baseURL: baseURL) } ?? false,
            "historical": false,
        ]
        if let h = view.historicalKeys {
            context["historical"] = [
                "hasKeys": !h.keys.isEmpty,
                "keys": h.keys.map { k in
                    ["kid": V.visible(k.kid), "kty": V.visible(k.kty), "exp": V.time(k.exp), "revokedAt": V.time(k.revokedAt),
                     "reason": V.visible(k.reason ?? "")]
                },
                "jwt": V.jwt(h.jwt, baseURL: baseURL),
            ] as [String: Any]
        }
        return page.render(title: "Entity " + V.visible(id), context: context)
    }

    private static func subordinates(_ p: SubordinatePage, baseURL: String) -> [String: Any] {
        let base = ExplorerPage.entityHref(p.superior)
        let rows: [[String: Any]] = p.rows.map { r in
            var row = V.entity(r.entityID, baseURL: baseURL)
            row["statementHref"] = statementHref(issuer: p.superior, subject: r.entityID)
            row["policy"] = r.hasMetadataPolicy
            row["constraints"] = r.hasConstraints
            row["problem"] = r.problem.map(V.visible) ?? false
            row["exp"] = V.time(r.expiresAt)
            return row
        }
        return [
            "first": p.firstShown, "last": p.lastShown, "total": p.total, "source": V.visible(p.source), "rows": rows,
            "size": SubordinatePage.size,
            "previous": p.previousOffset.map { base + "&offset=\($0)#subordinates" } ?? false,
            "next": p.nextOffset.map { base + "&offset=\($0)#subordinates" } ?? false,
        ]
    }

    static func statementHref(issuer: String, subject: String) -> String {
        "/explorer/statement?iss=" + ExplorerPage.queryEscaped(issuer) + "&sub=" + ExplorerPage.queryEscaped(subject)
    }
}
