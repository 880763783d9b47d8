import Support

/// A map bounded by a byte budget with approximate LRU eviction, used for signed statements and
/// fetched remote statements. The policy is SIEVE (Zhang et al., NSDI 2024), a CLOCK that keeps
/// insertion order: entries sit in a list from newest to oldest, a hit only sets a "visited"
/// bit, and the eviction hand walks from the oldest entry towards newer ones, clearing bits and
/// removing the first entry not visited since the hand last passed it.
///
/// Insertion order is what a plain CLOCK over an array lost: a swap-remove moved the newest entry
/// into the slot under the hand, so after a burst of one-off entries (cold resolves) the next
/// entries (a sweep of every subordinate statement) were evicted about as often as the stale
/// ones. At 100,000 leaves with a budget that holds every subordinate statement, a random
/// `fetch` after such a sweep then missed about half the time; with SIEVE the burst goes first.
///
/// Split into shards, each behind its own `Locked`: a hit takes only a shared lock, and the
/// exclusive lock only when the entry's bit is not set yet (once per entry per pass of the
/// hand), so hot entries are read by every worker thread at once.
final class ClockCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// No neighbour (the list's end).
    private static var none: Int32 { -1 }

    private struct Node {
        let key: Key
        var value: Value
        var cost: Int
        var visited: Bool
        /// Neighbours by index into `nodes`: towards the newest entry and towards the oldest.
        var newer: Int32
        var older: Int32
    }

    /// Nodes live densely in an array (removal moves the last node into the hole and relinks
    /// it), so a shard is two allocations however many entries it holds.
    private struct Shard {
        var index: [Key: Int32] = [:]
        var nodes: [Node] = []
        var newest: Int32 = -1
        var oldest: Int32 = -1
        /// Where eviction resumes; `none` (-1): at the oldest entry.
        var hand: Int32 = -1
        var bytes = 0
    }

    private let shards: [Locked<Shard>]
    private let shardBudget: Int
    /// The whole budget in bytes, as configured.
    let budget: Int

    /// `expectedEntryCost`: when given, each shard's list and index are allocated once for as
    /// many entries as the budget holds at that cost, instead of growing by doubling and leaving
    /// the freed smaller tables behind in the heap.
    init(budget: Int, shards count: Int = 16, expectedEntryCost: Int? = nil) {
        let n = max(1, count)
        self.budget = max(0, budget)
        let perShard = self.budget / n
        shardBudget = perShard
        let reserve = expectedEntryCost.map { perShard / max(1, $0) } ?? 0
        shards = (0..<n).map { _ in
            var s = Shard()
            if reserve > 0 {
                s.nodes.reserveCapacity(reserve)
                s.index.reserveCapacity(reserve)
            }
            return Locked(s)
        }
    }

    private func shard(_ key: Key) -> Locked<Shard> {
        shards[Int(UInt(bitPattern: key.hashValue) % UInt(shards.count))]
    }

    /// The stored value, fresh or not: the caller decides whether it may still be served.
    func get(_ key: Key) -> Value? {
        let shard = shard(key)
        let (value, unmarked) = shard.read { s -> (Value?, Bool) in
            guard let i = s.index[key] else { return (nil, false) }
            return (s.nodes[Int(i)].value, !s.nodes[Int(i)].visited)
        }
        if value != nil && unmarked {
            shard.withLock { s in if let i = s.index[key] { s.nodes[Int(i)].visited = true } }
        }
        return value
    }

    /// Stores `value` under `key` as the newest entry, evicting entries not visited since the
    /// hand last passed until the shard is within its budget. A value larger than a shard's
    /// budget is not kept at all (and replaces nothing stale).
    func set(_ key: Key, _ value: Value, cost: Int) {
        let shard = shard(key)
        guard cost <= shardBudget else {
            remove(key)
            return
        }
        shard.withLock { s in
            if let i = s.index[key].map(Int.init) {
                s.bytes += cost - s.nodes[i].cost
                s.nodes[i].value = value
                s.nodes[i].cost = cost
                s.nodes[i].visited = true
            } else {
                let i = Int32(s.nodes.count)
                s.nodes.append(Node(key: key, value: value, cost: cost, visited: false, newer: Self.none, older: s.newest))
                if s.newest != Self.none { s.nodes[Int(s.newest)].newer = i } else { s.oldest = i }
                s.newest = i
                s.index[key] = i
                s.bytes += cost
            }
            Self.evict(&s, budget: shardBudget, sparing: key)
        }
    }

    func remove(_ key: Key) {
        shard(key).withLock { s in
            guard let i = s.index[key] else { return }
            Self.removeNode(at: i, from: &s)
        }
    }

    func removeAll() {
        for shard in shards { shard.withLock { $0 = Shard() } }
    }

    /// Entries and bytes held, for tests and diagnostics.
    var count: Int { shards.reduce(0) { n, s in n + s.read { $0.nodes.count } } }
    var bytes: Int { shards.reduce(0) { n, s in n + s.read { $0.bytes } } }

    private static func evict(_ s: inout Shard, budget: Int, sparing key: Key) {
        while s.bytes > budget && s.nodes.count > 1 {
            let h = s.hand == none ? s.oldest : s.hand
            let node = s.nodes[Int(h)]
            // Moving towards newer entries; past the newest the hand starts over at the oldest.
            s.hand = node.newer
            if node.key == key { continue }
            if node.visited {
                s.nodes[Int(h)].visited = false
            } else {
                removeNode(at: h, from: &s)
            }
        }
    }

    /// Unlinks node `i`, then moves the last node into its place (relinking that one), so
    /// removal is O(1) and the array stays dense.
    private static func removeNode(at i: Int32, from s: inout Shard) {
        let removed = s.nodes[Int(i)]
        if removed.older != none { s.nodes[Int(removed.older)].newer = removed.newer } else { s.oldest = removed.newer }
        if removed.newer != none { s.nodes[Int(removed.newer)].older = removed.older } else { s.newest = removed.older }
        if s.hand == i { s.hand = removed.newer }
        s.bytes -= removed.cost
        s.index[removed.key] = nil

        let last = Int32(s.nodes.count - 1)
        let moved = s.nodes.removeLast()
        guard i != last else { return }
        s.nodes[Int(i)] = moved
        s.index[moved.key] = i
        if moved.older != none { s.nodes[Int(moved.older)].newer = i } else { s.oldest = i }
        if moved.newer != none { s.nodes[Int(moved.newer)].older = i } else { s.newest = i }
        if s.hand == last { s.hand = i }
    }
}
