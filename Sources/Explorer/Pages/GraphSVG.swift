/// `/explorer/graph.svg`: the hierarchy (`FederationGraph`) drawn as an outline, one box per
/// row, indented by depth, with elbow lines to the superior. Server-rendered, no script: it is
/// shown through `<img>`, where an SVG runs none anyway, and served under the HTML pages' CSP.
///
/// Every text in it comes from entity files or other servers, so each goes through
/// `xmlEscaped`, which also replaces the characters XML 1.0 does not allow at all (a control
/// character in an organization name would otherwise make the whole picture unreadable).
enum GraphSVG {
    private static let rowHeight = 46
    private static let boxHeight = 38
    private static let indent = 28
    private static let margin = 12
    /// Monospace at 12 px: a character is 0.6 em wide, so box widths follow the text.
    private static let charWidth = 7.2
    private static let maxLine = 80

    static func render(_ graph: FederationGraph) -> String {
        var boxes = ""
        var edges = ""
        var width = 320
        for (i, row) in graph.rows.enumerated() {
            let x = margin + row.depth * indent
            let y = margin + i * rowHeight
            let (first, second, href, title, kind) = text(row.box)
            let w = Int(Double(max(first.count, second.count)) * charWidth) + 16
            width = max(width, x + w + margin)
            if let parent = row.parent {
                let px = margin + graph.rows[parent].depth * indent + 10
                let py = margin + parent * rowHeight + boxHeight
                edges += "<path d=\"M\(px) \(py)V\(y + boxHeight / 2)H\(x)\"/>"
            }
            boxes += "<a href=\"\(xmlEscaped(href))\"><title>\(xmlEscaped(title))</title>"
            boxes += "<rect class=\"\(kind)\" x=\"\(x)\" y=\"\(y)\" width=\"\(w)\" height=\"\(boxHeight)\" rx=\"5\"/>"
            boxes += "<text x=\"\(x + 8)\" y=\"\(y + 15)\" class=\"t\">\(xmlEscaped(first))</text>"
            boxes += "<text x=\"\(x + 8)\" y=\"\(y + 31)\" class=\"s\">\(xmlEscaped(second))</text></a>\n"
        }
        var height = margin * 2 + graph.rows.count * rowHeight
        var footer = ""
        if graph.truncated {
            footer = "<text x=\"\(margin)\" y=\"\(height)\" class=\"s\">The picture stops here; the tree pages show every entity.</text>"
            height += rowHeight
        }
        if graph.rows.isEmpty {
            footer = "<text x=\"\(margin)\" y=\"\(margin + 16)\" class=\"t\">No Trust Anchor is hosted here.</text>"
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" viewBox="0 0 \(width) \(height)" \
            role="img" aria-label="Federation hierarchy">
            <style>
            text{font:12px ui-monospace,Menlo,Consolas,monospace;fill:#1b1f23}.t{font-weight:700}.s{fill:#57606a}
            rect{fill:#fff;stroke:#8c959f}rect.ta{fill:#fff8c5;stroke:#d4a72c}rect.sup{fill:#ddf4ff;stroke:#54aeff}
            rect.group{fill:#f6f8fa;stroke-dasharray:4 3}rect.ext{fill:#ffebe9;stroke:#ff8182}
            path{fill:none;stroke:#8c959f}
            </style>
            <g>\(edges)</g>
            \(boxes)\(footer)
            </svg>

            """
    }

    /// The two lines of a box, where it links, its tooltip and its style class.
    private static func text(_ box: FederationGraph.Box) -> (String, String, String, String, String) {
        switch box {
        case .entity(let node):
            var first = node.name
            if node.isSuperior && !node.isTrustAnchor { first += " (\(node.subordinateCount))" }
            // Trust marks first: a long list of entity types must not clip them away.
            let second = (node.trustMarkTypes.map { "✓ " + TreeNodeView.shortTrustMarkType($0) } + node.entityTypes)
                .joined(separator: " ")
            if let org = node.organizationName, !org.isEmpty { first += " · " + org }
            let kind = node.isTrustAnchor ? "ta" : node.isSuperior ? "sup" : node.hosted ? "leaf" : "ext"
            return (clipped(first), clipped(second), ExplorerPage.entityHref(node.entityID), node.entityID, kind)
        case .leaves(let superior, let count, let marked):
            let second = marked > 0 ? "\(marked) with trust marks" : "open the tree for each"
            return ("\(count) leaves", second, TreeNodeView.treeHref(superior), "\(count) leaves of \(superior)", "group")
        case .more(let superior, let count):
            return ("… \(count) more", "open the tree for them", TreeNodeView.treeHref(superior),
                    "\(count) more subordinates of \(superior)", "group")
        }
    }

    private static func clipped(_ text: String) -> String {
        text.count > maxLine ? String(text.prefix(maxLine - 1)) + "…" : text
    }

    /// `text` as XML character data or a quoted attribute value: the five markup characters as
    /// entities, and every character XML 1.0 forbids (controls other than tab, line feed and
    /// carriage return; U+FFFE, U+FFFF) replaced by U+FFFD. Tab and line breaks become spaces:
    /// a box has one line per text.
    static func xmlEscaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out += " "
            default:
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
