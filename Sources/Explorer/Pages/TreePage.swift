/// `/explorer/tree?id=`: one superior, the way up to its Trust Anchor, and one page of its
/// subordinates; `/explorer/search?q=`: one page of matches. Both list nodes as the landing
/// page does and page with links (no JavaScript).
enum TreePage {
    static func render(_ level: TreeLevel) -> String {
        var subject = TreeNodeView.context(level.node)
        // The page is already this node's level: no link to itself.
        subject["superior"] = false
        subject["path"] = level.path.map { ["name": $0.name, "treeHref": TreeNodeView.treeHref($0.entityID)] }
        subject["children"] = level.children.map { TreeNodeView.context($0) }
        subject["total"] = level.total
        subject["hasChildren"] = level.total > 0
        subject["from"] = level.offset + 1
        subject["to"] = level.offset + level.children.count
        subject["query"] = ""
        subject["pastEnd"] = level.children.isEmpty && level.total > 0
        subject.merge(pager(id: level.node.entityID, previous: level.previousOffset, next: level.nextOffset)) { $1 }
        return treeTemplate.render(title: level.node.name, context: subject)
    }

    static func render(_ results: SearchResults) -> String {
        var c: [String: Any] = [
            "query": results.query,
            "asked": !results.query.trimmingSpaces.isEmpty,
            "matches": results.matches.map { TreeNodeView.context($0) },
            "total": results.total,
            "found": results.total > 0,
            "from": results.offset + 1,
            "to": results.offset + results.matches.count,
        ]
        let q = "/explorer/search?q=" + ExplorerPage.queryEscaped(results.query)
        c["hasPrevious"] = results.previousOffset != nil
        c["previousHref"] = q + "&offset=\(results.previousOffset ?? 0)"
        c["hasNext"] = results.nextOffset != nil
        c["nextHref"] = q + "&offset=\(results.nextOffset ?? 0)"
        c["paged"] = results.previousOffset != nil || results.nextOffset != nil
        return searchTemplate.render(title: "Search", context: c)
    }

    /// A page that says what is wrong (an unknown entity, a bad parameter), with the way back.
    static func problem(title: String, message: String, entityID: String? = nil) -> String {
        var c: [String: Any] = ["message": message, "query": "", "hasEntity": entityID != nil]
        if let entityID { c["entityHref"] = ExplorerPage.entityHref(entityID) }
        return problemTemplate.render(title: title, context: c)
    }

    private static func pager(id: String, previous: Int?, next: Int?) -> [String: Any] {
        [
            "hasPrevious": previous != nil, "previousHref": TreeNodeView.treeHref(id, offset: previous ?? 0),
            "hasNext": next != nil, "nextHref": TreeNodeView.treeHref(id, offset: next ?? 0),
            "paged": previous != nil || next != nil,
            "pageLimit": FederationTree.pageLimit,
        ]
    }

    private static let pagerHTML = """
        {{#paged}}<nav class="pager">\
        <span>{{#hasPrevious}}<a rel="prev" href="{{previousHref}}">‹ previous</a>{{/hasPrevious}}</span>\
        <span>{{#hasNext}}<a rel="next" href="{{nextHref}}">next ›</a>{{/hasNext}}</span>\
        </nav>{{/paged}}
        """

    private static let treeTemplate = ExplorerPage(TreeNodeView.style + """
        <nav class="crumbs"><a href="/">Federation</a> › {{#path}}<a href="{{treeHref}}">{{name}}</a> › {{/path}}<strong>{{name}}</strong></nav>
        <div class="node">\(TreeNodeView.line)</div>
        \(SearchForm.html)
        <h2>Subordinates</h2>
        {{#hasChildren}}
        {{^pastEnd}}<p class="muted">{{from}}–{{to}} of {{total}}</p>{{/pastEnd}}
        {{#pastEnd}}<p class="muted">Past the last of {{total}}; <a href="{{treeHref}}">back to the first page</a>.</p>{{/pastEnd}}
        <ul class="nodes">
        {{#children}}\(TreeNodeView.item){{/children}}
        </ul>
        \(pagerHTML)
        {{/hasChildren}}
        {{^hasChildren}}<p>{{name}} has no subordinates: it is a leaf.</p>{{/hasChildren}}
        """)

    private static let searchTemplate = ExplorerPage(TreeNodeView.style + """
        <nav class="crumbs"><a href="/">Federation</a> › Search</nav>
        \(SearchForm.html)
        {{#asked}}
        {{#found}}<p class="muted">{{from}}–{{to}} of {{total}} matching “{{query}}”</p>{{/found}}
        {{^found}}<p>Nothing matches “{{query}}” (names, entity IDs and organization names are searched).</p>{{/found}}
        <ul class="nodes">
        {{#matches}}\(TreeNodeView.item){{/matches}}
        </ul>
        \(pagerHTML)
        {{/asked}}
        {{^asked}}<p class="muted">Type part of a name, an entity ID or an organization name; case does not matter.</p>{{/asked}}
        """)

    private static let problemTemplate = ExplorerPage("""
        <p class="error">{{message}}</p>
        {{#hasEntity}}<p><a href="{{entityHref}}">Its entity page</a> may say more.</p>{{/hasEntity}}
        <p><a href="/">Back to the federation</a></p>
        """)
}
