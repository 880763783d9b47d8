import Support

/// A map bounded by a byte budget with approximate LRU eviction (the federation keeps its signed
/// statements and fetched remote statements in it). The policy is SIEVE (Zhang et al., NSDI
/// 2024), a CLOCK that keeps insertion order: entries sit in a list from newest to oldest, a hit
/// only sets a "visited" bit, and the eviction hand walks from the oldest entry towards newer
/// ones, clearing bits and removing the first entry not visited since the hand last passed it.
///
/// It stays in the module that uses it: called from another module, a generic class runs
/// unspecialized, through value witnesses and generic metadata lookups on every `get` (a cached
/// `fetch` cost 7% more instructions and ran at 0.6 of the hot entity configuration at 100,000
/// leaves instead of 1.0; docs/performance.md, issue 18).
///
/// Insertion order is what a plain CLOCK over an array lost: a swap-remove moved the newest entry
/// into the slot under the hand, so after a burst of one-off entries (cold resolves) the next
/// entries (a sweep of every subordinate statement) were evicted about as often as the stale
/// ones. At 100,000 leaves with a budget that holds every subordinate statement, a random
/// `fetch` after such a sweep then missed about half the time; with SIEVE the burst goes first.
///
/// Split into shards, each behind its own `Locked`. A hit takes its shard's lock exclusively,
/// once: it finds the entry, sets its bit and copies the value out in one pass. A shared lock
/// cost more: `Locked.read` hands the closure a copy of the shard (retaining and releasing both
/// arrays, whose counts every worker thread writes), and an entry not yet visited needed the
/// exclusive lock and a second probe anyway. The section is a probe and a copy; with 16 shards
/// two threads rarely meet in one.
///
/// Each shard is two arrays: the entries (list links by index) and an open-addressing index of
/// entry numbers, probed with the hash each entry keeps. A `Dictionary` from key to entry
/// number stored every key a second time: with a subordinate statement's key (32 bytes) and a
/// table at most 3/4 full that was 48-96 bytes an entry, where these slots take 8-16, and a
/// lookup hashed the key twice (once for the shard). See `entryOverhead`.
final class ClockCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// No neighbour (the list's end), no entry (an empty slot).
    private static var none: Int32 { -1 }

    private struct Node {
        let key: Key
        var value: Value
        let hash: Int
        /// Bytes as the caller counted them (a shard's budget is far below 2 GiB).
        var cost: Int32
        /// Neighbours by index into `nodes`: towards the newest entry and towards the oldest.
        var newer: Int32
        var older: Int32
        var visited: Bool
    }

    /// Nodes live densely in an array (removal moves the last node into the hole and relinks
    /// it), so a shard is two allocations however many entries it holds.
    private struct Shard {
        var nodes: [Node] = []
        /// Indexes into `nodes` by hash, linear probing; a power of two in size, at most half full.
        var slots: [Int32] = []
        var newest: Int32 = -1
        var oldest: Int32 = -1
        /// Where eviction resumes; `none` (-1): at the oldest entry.
        var hand: Int32 = -1
        var bytes = 0
    }

    /// Bytes of bookkeeping per entry besides what the caller's cost counts (key and value's
    /// own allocations): the entry in its array, and its share of the index, which holds two to
    /// four slots an entry.
    static var entryOverhead: Int { MemoryLayout<Node>.stride + 3 * MemoryLayout<Int32>.stride }

    private let shards: [Locked<Shard>]
    private let shardBudget: Int
    /// The whole budget in bytes, as configured.
    let budget: Int

    /// `expectedEntryCost`: when given, each shard's entry array is reserved once for as many
    /// entries as the budget holds at that cost (address space only until used), instead of
    /// growing by doubling and leaving the freed smaller arrays behind in the heap.
    init(budget: Int, shards count: Int = 16, expectedEntryCost: Int? = nil) {
        let n = max(1, count)
        self.budget = max(0, budget)
        let perShard = self.budget / n
        shardBudget = perShard
        let reserve = expectedEntryCost.map { perShard / max(1, $0) } ?? 0
        shards = (0..<n).map { _ in
            var s = Shard()
            if reserve > 0 { s.nodes.reserveCapacity(reserve) }
            return Locked(s)
        }
    }

    private func shard(_ hash: Int) -> Locked<Shard> {
        // The high half picks the shard, the low bits the slot within it.
        shards[Int((UInt(bitPattern: hash) >> 32) % UInt(shards.count))]
    }

    /// The stored value, fresh or not: the caller decides whether it may still be served.
    func get(_ key: Key) -> Value? {
        let hash = key.hashValue
        return shard(hash).withLock { s -> Value? in
            guard let found = Self.find(key, hash: hash, in: s) else { return nil }
            let i = Int(found)
            // Written only when it changes: a set bit leaves the node's line clean.
            if !s.nodes[i].visited { s.nodes[i].visited = true }
            return s.nodes[i].value
        }
    }

    /// Stores `value` under `key` as the newest entry, evicting entries not visited since the
    /// hand last passed until the shard is within its budget. A value larger than a shard's
    /// budget is not kept at all (and replaces nothing stale).
    func set(_ key: Key, _ value: Value, cost: Int) {
        let hash = key.hashValue
        let shard = shard(hash)
        guard cost <= shardBudget, cost <= Int(Int32.max) else {
            shard.withLock { s in if let i = Self.find(key, hash: hash, in: s) { Self.removeNode(at: i, from: &s) } }
            return
        }
        shard.withLock { s in
            if let found = Self.find(key, hash: hash, in: s) {
                let i = Int(found)
                s.bytes += cost - Int(s.nodes[i].cost)
                s.nodes[i].value = value
                s.nodes[i].cost = Int32(cost)
                s.nodes[i].visited = true
            } else {
                let i = Int32(s.nodes.count)
                if (s.nodes.count + 1) * 2 > s.slots.count { Self.grow(&s) }
                s.nodes.append(Node(key: key, value: value, hash: hash, cost: Int32(cost), newer: Self.none, older: s.newest, visited: false))
                if s.newest != Self.none { s.nodes[Int(s.newest)].newer = i } else { s.oldest = i }
                s.newest = i
                Self.insertSlot(i, hash: hash, into: &s)
                s.bytes += cost
            }
            Self.evict(&s, budget: shardBudget, sparing: key, hash: hash)
        }
    }

    func remove(_ key: Key) {
        let hash = key.hashValue
        shard(hash).withLock { s in
            guard let i = Self.find(key, hash: hash, in: s) else { return }
            Self.removeNode(at: i, from: &s)
        }
    }

    func removeAll() {
        for shard in shards { shard.withLock { $0 = Shard() } }
    }

    /// Entries and bytes held, for tests and diagnostics.
    var count: Int { shards.reduce(0) { n, s in n + s.read { $0.nodes.count } } }
    var bytes: Int { shards.reduce(0) { n, s in n + s.read { $0.bytes } } }

    private static func evict(_ s: inout Shard, budget: Int, sparing key: Key, hash: Int) {
        while s.bytes > budget && s.nodes.count > 1 {
            let h = s.hand == none ? s.oldest : s.hand
            let node = s.nodes[Int(h)]
            // Moving towards newer entries; past the newest the hand starts over at the oldest.
            s.hand = node.newer
            if node.hash == hash && node.key == key { continue }
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
        s.bytes -= Int(removed.cost)
        removeSlot(of: i, hash: removed.hash, from: &s)

        let last = Int32(s.nodes.count - 1)
        let moved = s.nodes.removeLast()
        guard i != last else { return }
        s.nodes[Int(i)] = moved
        s.slots[slot(of: last, hash: moved.hash, in: s)] = i
        if moved.older != none { s.nodes[Int(moved.older)].newer = i } else { s.oldest = i }
        if moved.newer != none { s.nodes[Int(moved.newer)].older = i } else { s.newest = i }
        if s.hand == last { s.hand = i }
    }

    // MARK: - The index

    private static func find(_ key: Key, hash: Int, in s: Shard) -> Int32? {
        guard !s.slots.isEmpty else { return nil }
        let mask = s.slots.count - 1
        var slot = hash & mask
        while true {
            let i = s.slots[slot]
            if i == none { return nil }
            if s.nodes[Int(i)].hash == hash && s.nodes[Int(i)].key == key { return i }
            slot = (slot + 1) & mask
        }
    }

    /// The slot holding node `i` (which must be indexed).
    private static func slot(of i: Int32, hash: Int, in s: Shard) -> Int {
        let mask = s.slots.count - 1
        var slot = hash & mask
        while s.slots[slot] != i { slot = (slot + 1) & mask }
        return slot
    }

    /// Places node `i`; the index has room (see `grow`).
    private static func insertSlot(_ i: Int32, hash: Int, into s: inout Shard) {
        let mask = s.slots.count - 1
        var slot = hash & mask
        while s.slots[slot] != none { slot = (slot + 1) & mask }
        s.slots[slot] = i
    }

    /// Doubles the index (at least 8 slots) and places every node again by its kept hash.
    private static func grow(_ s: inout Shard) {
        let size = max(8, s.slots.count * 2)
        s.slots = Array(repeating: none, count: size)
        let mask = size - 1
        for (i, node) in s.nodes.enumerated() {
            var slot = node.hash & mask
            while s.slots[slot] != none { slot = (slot + 1) & mask }
            s.slots[slot] = Int32(i)
        }
    }

    /// Empties node `i`'s slot, shifting later entries of its probe run back so that every
    /// entry stays reachable from its home slot (linear probing needs no tombstones then).
    private static func removeSlot(of i: Int32, hash: Int, from s: inout Shard) {
        let mask = s.slots.count - 1
        var hole = slot(of: i, hash: hash, in: s)
        var next = (hole + 1) & mask
        while s.slots[next] != none {
            let home = s.nodes[Int(s.slots[next])].hash & mask
            // The entry at `next` may fill the hole unless its home lies after the hole.
            if (next - home) & mask >= (next - hole) & mask {
                s.slots[hole] = s.slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        s.slots[hole] = none
    }
}
