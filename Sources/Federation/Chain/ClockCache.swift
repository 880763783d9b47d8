import Support

/// A map bounded by a byte budget with approximate LRU eviction (CLOCK, "second chance"), used
/// for signed statements and fetched remote statements. Split into shards, each behind its own
/// `Locked`: a hit takes only a shared lock, and the exclusive lock only when the entry's
/// "recently used" bit is not set yet (once per entry per sweep of the clock hand), so hot
/// entries are read by every worker thread at once.
final class ClockCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Slot {
        let key: Key
        var value: Value
        var cost: Int
        var referenced: Bool
    }

    private struct Shard {
        var index: [Key: Int] = [:]
        var slots: [Slot] = []
        var hand = 0
        var bytes = 0
    }

    private let shards: [Locked<Shard>]
    private let shardBudget: Int
    /// The whole budget in bytes, as configured.
    let budget: Int

    init(budget: Int, shards count: Int = 16) {
        let n = max(1, count)
        self.budget = max(0, budget)
        shardBudget = self.budget / n
        shards = (0..<n).map { _ in Locked(Shard()) }
    }

    private func shard(_ key: Key) -> Locked<Shard> {
        shards[Int(UInt(bitPattern: key.hashValue) % UInt(shards.count))]
    }

    /// The stored value, fresh or not: the caller decides whether it may still be served.
    func get(_ key: Key) -> Value? {
        let shard = shard(key)
        let (value, unmarked) = shard.read { s -> (Value?, Bool) in
            guard let i = s.index[key] else { return (nil, false) }
            return (s.slots[i].value, !s.slots[i].referenced)
        }
        if value != nil && unmarked {
            shard.withLock { s in if let i = s.index[key] { s.slots[i].referenced = true } }
        }
        return value
    }

    /// Stores `value` under `key`, evicting entries that were not used since the hand last
    /// passed until the shard is within its budget. A value larger than a shard's budget is not
    /// kept at all (and replaces nothing stale).
    func set(_ key: Key, _ value: Value, cost: Int) {
        let shard = shard(key)
        guard cost <= shardBudget else {
            remove(key)
            return
        }
        shard.withLock { s in
            if let i = s.index[key] {
                s.bytes += cost - s.slots[i].cost
                s.slots[i].value = value
                s.slots[i].cost = cost
                s.slots[i].referenced = true
            } else {
                s.index[key] = s.slots.count
                s.slots.append(Slot(key: key, value: value, cost: cost, referenced: false))
                s.bytes += cost
            }
            Self.evict(&s, budget: shardBudget, sparing: key)
        }
    }

    func remove(_ key: Key) {
        shard(key).withLock { s in
            guard let i = s.index[key] else { return }
            Self.removeSlot(at: i, from: &s)
        }
    }

    func removeAll() {
        for shard in shards { shard.withLock { $0 = Shard() } }
    }

    /// Entries and bytes held, for tests and diagnostics.
    var count: Int { shards.reduce(0) { n, s in n + s.read { $0.slots.count } } }
    var bytes: Int { shards.reduce(0) { n, s in n + s.read { $0.bytes } } }

    private static func evict(_ s: inout Shard, budget: Int, sparing key: Key) {
        while s.bytes > budget && s.slots.count > 1 {
            if s.hand >= s.slots.count { s.hand = 0 }
            if s.slots[s.hand].key == key {
                s.hand += 1
            } else if s.slots[s.hand].referenced {
                s.slots[s.hand].referenced = false
                s.hand += 1
            } else {
                removeSlot(at: s.hand, from: &s)
            }
        }
    }

    /// Swap-remove: the last slot takes the freed place, so removal is O(1).
    private static func removeSlot(at i: Int, from s: inout Shard) {
        let removed = s.slots[i]
        s.bytes -= removed.cost
        s.index[removed.key] = nil
        let last = s.slots.removeLast()
        if i < s.slots.count {
            s.slots[i] = last
            s.index[last.key] = i
        }
    }
}
