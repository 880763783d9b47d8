/// The page a browser gets at `/`: the counts, a search box, each Trust Anchor with its first
/// page of subordinates (a `<details>` that opens without JavaScript), and the picture.
/// Each subordinate that has subordinates of its own links to its tree page, so the hierarchy
/// opens one level, and one page of `FederationTree.pageLimit`, at a time.
enum LandingPage {
    static func render(tree: FederationTree) -> String {
        let counts = tree.counts
        let anchors: [[String: Any]] = tree.trustAnchorIDs.compactMap { id in
            guard let level = tree.level(id, offset: 0) else { return nil }
            var c = TreeNodeView.context(level.node)
            c["children"] = level.children.map { TreeNodeView.context($0) }
            c["total"] = level.total
            c["hasMore"] = level.nextOffset != nil
            c["moreHref"] = TreeNodeView.treeHref(id, offset: level.limit)
            return c
        }
        let context: [String: Any] = [
            "entities": counts.entities, "trustAnchors": counts.trustAnchors, "intermediates": counts.intermediates,
            "leaves": counts.leaves, "anchors": anchors, "pageLimit": FederationTree.pageLimit, "query": "",
        ]
        return template.render(title: "Federation", context: context)
    }

    private static let template = ExplorerPage(TreeNodeView.style + """
        <dl class="counts">
        <dt>Entities</dt><dd>{{entities}}</dd>
        <dt>Trust Anchors</dt><dd>{{trustAnchors}}</dd>
        <dt>Intermediates</dt><dd>{{intermediates}}</dd>
        <dt>Leaves</dt><dd>{{leaves}}</dd>
        </dl>
        \(SearchForm.html)
        <h2>Hierarchy</h2>
        {{#anchors}}
        <details class="anchor">
        <summary>{{name}} · {{total}} subordinate{{plural}}</summary>
        <div class="node">\(TreeNodeView.line)</div>
        <ul class="nodes">
        {{#children}}\(TreeNodeView.item){{/children}}
        </ul>
        {{#hasMore}}<p><a href="{{moreHref}}">all {{total}} subordinates, {{pageLimit}} a page ›</a></p>{{/hasMore}}
        </details>
        {{/anchors}}
        {{^anchors}}<p>No Trust Anchor is hosted here.</p>{{/anchors}}
        <h2>Picture</h2>
        <div class="scroll"><img class="picture" src="/explorer/graph.svg" alt="The hierarchy: Trust Anchors, intermediates and leaves, with entity types and trust marks"></div>
        <p class="muted">Trust marks are those local issuers declare; their live status is on each entity's page.
        Programs asking for JSON (<code>Accept: application/json</code>, curl's <code>*/*</code>) get the index as JSON here.</p>
        """)
}

/// The search box of the landing, tree and search pages: a GET form, so a search is a link.
enum SearchForm {
    static let html = """
        <form class="search" method="get" action="/explorer/search" role="search">
        <input type="text" name="q" value="{{query}}" maxlength="256" aria-label="Name, entity ID or organization name" placeholder="Name, entity ID or organization name">
        <button type="submit">Search</button>
        </form>
        """
}
