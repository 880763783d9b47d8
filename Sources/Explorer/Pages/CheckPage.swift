import Foundation

/// The check page (`/explorer/check?id=`): `trustbed check` as a page, one line per finding,
/// ok or the problem, in the order the checker ran them.
enum CheckPage {
    typealias V = StatementView

    private static let page = ExplorerPage(V.style + """
        <p>{{#entity}}\(V.entityLink){{/entity}}</p>
        <p class="summary"><span class="badge {{class}}">{{summary}}</span></p>
        <ul class="findings">
        {{#findings}}<li class="finding"><span class="badge {{class}}">{{label}}</span> {{message}}</li>{{/findings}}
        </ul>
        <form method="get" action="/explorer/check"><p><label for="id">Entity ID</label>
        <input type="text" id="id" name="id" value="{{id}}"></p><p><button type="submit">Check</button></p></form>

        """)

    static func render(_ report: CheckReport, baseURL: String) -> String {
        let problems = report.problems
        let context: [String: Any] = [
            "entity": V.entity(report.entityID, baseURL: baseURL),
            "id": V.visible(report.entityID),
            "class": problems == 0 ? "ok" : "problem",
            "summary": problems == 0 ? "no problems found" : "\(problems) problem(s)",
            "findings": report.findings.map { f in
                ["class": f.ok ? "ok" : "problem", "label": f.ok ? "ok" : "problem", "message": V.visible(f.message)]
            },
        ]
        return page.render(title: "Check " + V.visible(report.entityID), context: context)
    }
}
