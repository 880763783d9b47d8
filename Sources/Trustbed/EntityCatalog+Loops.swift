import Federation

extension EntityCatalog {
    /// A loop among local `authority_hints` can never reach a trust anchor; refuse it at start-up.
    ///
    /// Linear in entities plus hints (Tarjan's strongly connected components, iteratively, so a
    /// deep hierarchy cannot overflow the stack): the first entity in name order that lies on a
    /// loop is reported, with one loop through it, as the earlier path search did.
    static func checkNoLocalLoops(_ entities: [HostedEntity], file: (HostedEntity) -> String) throws(EntityFileError) {
        var index: [String: Int] = [:]
        index.reserveCapacity(entities.count)
        for (i, e) in entities.enumerated() { index[e.entityID] = i }
        // Edges to hosted entities only: a remote superior cannot close a loop we can see.
        let edges: [[Int]] = entities.map { $0.authorityHints.compactMap { index[$0] } }
        let component = stronglyConnectedComponents(edges)
        var size = [Int](repeating: 0, count: entities.count)
        for c in component { size[c] += 1 }

        for (i, e) in entities.enumerated() where size[component[i]] > 1 || edges[i].contains(i) {
            let loop = cycle(through: i, edges: edges, within: component).map { entities[$0].entityID }
            throw EntityFileError(file: file(e), field: "authority_hints", "loop: \(loop.joined(separator: " → "))")
        }
    }

    /// Component number of each node.
    static func stronglyConnectedComponents(_ edges: [[Int]]) -> [Int] {
        let n = edges.count
        var order = [Int](repeating: -1, count: n), low = [Int](repeating: 0, count: n)
        var component = [Int](repeating: -1, count: n)
        var onStack = [Bool](repeating: false, count: n)
        var stack: [Int] = [], counter = 0, components = 0
        // Explicit call stack of (node, next edge to look at).
        var frames: [(node: Int, edge: Int)] = []
        for root in 0 ..< n where order[root] < 0 {
            frames.append((root, 0))
            order[root] = counter; low[root] = counter; counter += 1
            stack.append(root); onStack[root] = true
            while let (v, k) = frames.last {
                if k < edges[v].count {
                    frames[frames.count - 1].edge += 1
                    let w = edges[v][k]
                    if order[w] < 0 {
                        order[w] = counter; low[w] = counter; counter += 1
                        stack.append(w); onStack[w] = true
                        frames.append((w, 0))
                    } else if onStack[w] {
                        low[v] = min(low[v], order[w])
                    }
                    continue
                }
                frames.removeLast()
                if let parent = frames.last?.node { low[parent] = min(low[parent], low[v]) }
                if low[v] == order[v] {
                    while let w = stack.popLast() {
                        onStack[w] = false
                        component[w] = components
                        if w == v { break }
                    }
                    components += 1
                }
            }
        }
        return component
    }

    /// A shortest path start → … → start inside start's component (breadth first).
    private static func cycle(through start: Int, edges: [[Int]], within component: [Int]) -> [Int] {
        var parent: [Int: Int] = [:]
        var queue = [start], head = 0
        while head < queue.count {
            let v = queue[head]; head += 1
            for w in edges[v] where component[w] == component[start] {
                if w == start {
                    var path = [start], at = v
                    while at != start { path.append(at); at = parent[at]! }
                    return [start] + path.dropFirst().reversed() + [start]
                }
                if parent[w] == nil { parent[w] = v; queue.append(w) }
            }
        }
        return [start, start]
    }
}
