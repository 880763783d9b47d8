import Federation

/// The hierarchy as the picture at `/explorer/graph.svg` draws it: an outline from each Trust
/// Anchor down, one row per box. A picture of 100,000 boxes helps nobody, so at scale it
/// summarizes: more than `leafGroupThreshold` leaves under one superior become one box
/// ("N leaves"), more than `superiorLimit` intermediates under one superior show the first ones
/// and a box for the rest, and the whole picture stops at `rowLimit` rows. The tree pages are
/// where one goes further.
public struct FederationGraph: Sendable {
    public static let leafGroupThreshold = 12
    public static let superiorLimit = 40
    public static let rowLimit = 400

    public enum Box: Sendable, Equatable {
        case entity(TreeNode)
        /// `count` leaves of `superior`, of which `trustMarked` hold a trust mark.
        case leaves(superior: String, count: Int, trustMarked: Int)
        /// Subordinates of `superior` left out (intermediates past `superiorLimit`, or the rest
        /// once the picture is full).
        case more(superior: String, count: Int)
    }

    public struct Row: Sendable, Equatable {
        public let depth: Int
        public let box: Box
        /// The row of the superior this box hangs from (nil for a Trust Anchor).
        public let parent: Int?
    }

    public private(set) var rows: [Row] = []
    /// True when `rowLimit` cut the picture short.
    public private(set) var truncated = false

    public init(tree: FederationTree) {
        for anchor in tree.trustAnchorIDs {
            guard rows.count < Self.rowLimit else { truncated = true; break }
            add(tree.node(anchor), depth: 0, parent: nil, tree: tree, path: [anchor])
        }
    }

    private mutating func add(_ node: TreeNode, depth: Int, parent: Int?, tree: FederationTree, path: Set<String>) {
        let me = rows.count
        rows.append(Row(depth: depth, box: .entity(node), parent: parent))
        guard node.isSuperior else { return }
        let children = tree.children(of: node.entityID)
        // Superiors come first in `children`; a subordinate already on the way up (a loop
        // through a remote statement) is not drawn again.
        let superiorCount = children.prefix { tree.host.isSuperior($0.entityID) }.count
        let superiors = children.prefix(superiorCount).filter { !path.contains($0.entityID) }
        let leaves = children.dropFirst(superiorCount)
        for (i, child) in superiors.enumerated() {
            if i == Self.superiorLimit || rows.count >= Self.rowLimit {
                rows.append(Row(depth: depth + 1, box: .more(superior: node.entityID, count: superiors.count - i), parent: me))
                truncated = truncated || rows.count >= Self.rowLimit
                break
            }
            add(tree.node(child.entityID, entry: child), depth: depth + 1, parent: me, tree: tree, path: path.union([child.entityID]))
        }
        if leaves.count > Self.leafGroupThreshold {
            let marks = tree.overview.trustMarkTypes
            let marked = leaves.reduce(0) { $0 + (marks[$1.entityID] == nil ? 0 : 1) }
            rows.append(Row(depth: depth + 1, box: .leaves(superior: node.entityID, count: leaves.count, trustMarked: marked), parent: me))
            return
        }
        for (i, leaf) in leaves.enumerated() {
            if rows.count >= Self.rowLimit {
                rows.append(Row(depth: depth + 1, box: .more(superior: node.entityID, count: leaves.count - i), parent: me))
                truncated = true
                return
            }
            rows.append(Row(depth: depth + 1, box: .entity(tree.node(leaf.entityID, entry: leaf)), parent: me))
        }
    }
}
