/// How the landing, tree and search pages show an entity: its name linking to its entity page,
/// the organization name, badges for its entity types and trust marks, and for a superior a
/// link that opens its subordinates. Every value goes into Mustache's `{{...}}` (escaped).
enum TreeNodeView {
    /// One `<li>` of a list of nodes; the context is `context(_:)`'s.
    static let item = """
        <li class="node">\(line)</li>
        """

    /// A node's content, without its list item (the tree page's subject uses it too).
    static let line = """
        <a class="name" href="{{entityHref}}">{{name}}</a>\
        {{#ta}} <span class="badge ta">Trust Anchor</span>{{/ta}}\
        {{#remote}} <span class="badge ext">other server</span>{{/remote}}
        {{#hasOrg}}<div class="org">{{org}}</div>{{/hasOrg}}\
        {{#showID}}<div class="id"><code>{{entityID}}</code></div>{{/showID}}
        <div class="badges">{{#types}}<span class="badge type">{{.}}</span> {{/types}}\
        {{#marks}}<span class="badge mark" title="{{type}}">✓ {{short}}</span> {{/marks}}</div>\
        {{#superior}}<a class="open" href="{{treeHref}}">{{subordinates}} subordinate{{plural}} ›</a>{{/superior}}
        """

    /// The styles of the above, put once into each page that lists nodes (the CSP allows inline
    /// styles; the shared layout stays as it is).
    static let style = """
        <style>
        ul.nodes{list-style:none;padding:0;margin:.5rem 0}
        li.node{padding:.5rem 0;border-bottom:1px solid #eaeef2}
        .node .name{font-weight:600;overflow-wrap:anywhere}
        .org{color:#1b1f23}.id{font-size:.8rem;color:#57606a}
        .badges{margin:.2rem 0}
        .badge{display:inline-block;font-size:.75rem;line-height:1.4;padding:0 .4rem;margin:.1rem 0;border-radius:1rem;
        border:1px solid #d0d7de;background:#f6f8fa;overflow-wrap:anywhere}
        .badge.ta{background:#fff8c5;border-color:#d4a72c}.badge.mark{background:#dafbe1;border-color:#4ac26b}
        .badge.ext{background:#ffebe9;border-color:#ff8182}
        .open{display:inline-block;margin-top:.2rem;font-size:.9rem}
        details.anchor{border:1px solid #d0d7de;border-radius:6px;padding:.5rem .75rem;margin:.5rem 0}
        details.anchor>summary{cursor:pointer;font-weight:600;overflow-wrap:anywhere}
        .pager{display:flex;justify-content:space-between;gap:1rem;margin:.75rem 0}
        .crumbs{font-size:.9rem;overflow-wrap:anywhere;margin-bottom:.5rem}
        .scroll{overflow-x:auto}.picture{max-width:none}
        form.search{display:flex;gap:.5rem;margin:.5rem 0 1rem}form.search input{flex:1;min-width:0}
        </style>
        """

    /// The Mustache context of `node`. Every key is set, false or empty when it does not
    /// apply: Mustache looks a missing name up in the enclosing contexts, and a leaf listed
    /// under a Trust Anchor would otherwise show the anchor's badge and organization.
    static func context(_ node: TreeNode, showID: Bool = true) -> [String: Any] {
        [
            "name": node.name,
            "entityID": node.entityID,
            "entityHref": ExplorerPage.entityHref(node.entityID),
            "types": node.entityTypes,
            "marks": node.trustMarkTypes.map { ["type": $0, "short": shortTrustMarkType($0)] },
            "ta": node.isTrustAnchor,
            "remote": !node.hosted,
            "hasOrg": !(node.organizationName ?? "").isEmpty,
            "org": node.organizationName ?? "",
            // A hosted entity's name already says where it is; its ID is shown all the same,
            // since that is what people paste elsewhere. Another server's name is its ID.
            "showID": showID && node.hosted,
            "superior": node.isSuperior,
            "treeHref": treeHref(node.entityID),
            "subordinates": node.subordinateCount,
            "plural": node.subordinateCount == 1 ? "" : "s",
        ]
    }

    static func treeHref(_ entityID: String, offset: Int = 0) -> String {
        "/explorer/tree?id=" + ExplorerPage.queryEscaped(entityID) + (offset > 0 ? "&offset=\(offset)" : "")
    }

    /// A trust mark type as a badge shows it: the last segment of its URL path (the types are
    /// URLs such as `https://trustbed.example/trust-marks/pid-provider`), at most 32 characters.
    static func shortTrustMarkType(_ type: String) -> String {
        var text = Substring(type)
        while text.hasSuffix("/") { text = text.dropLast() }
        if let slash = text.lastIndex(of: "/"), text.index(after: slash) < text.endIndex, text.contains("://") {
            text = text[text.index(after: slash)...]
        }
        return text.count > 32 ? String(text.prefix(31)) + "…" : String(text)
    }
}
