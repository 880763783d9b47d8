import XCTest
@testable import Federation

/// The byte-budgeted SIEVE cache the federation keeps statements in: eviction order, budget,
/// index consistency.
final class ClockCacheTests: XCTestCase {
    func testClockCacheStaysWithinItsBudgetAndSparesRecentlyUsedEntries() {
        let cache = ClockCache<Int, String>(budget: 1000, shards: 1)
        for i in 0..<10 { cache.set(i, "v\(i)", cost: 100) }
        XCTAssertEqual(cache.count, 10)
        XCTAssertEqual(cache.bytes, 1000)
        // Entry 0 is used; adding another entry must evict an unused one instead.
        XCTAssertEqual(cache.get(0), "v0")
        cache.set(10, "v10", cost: 100)
        XCTAssertLessThanOrEqual(cache.bytes, 1000)
        XCTAssertEqual(cache.get(0), "v0", "a recently used entry gets a second chance")
        XCTAssertEqual(cache.get(10), "v10", "the new entry is kept")
        XCTAssertEqual((0..<11).filter { cache.get($0) == nil }.count, 1, "exactly one entry went")
        // Many more entries: the budget holds throughout.
        for i in 100..<400 { cache.set(i, "x", cost: 100); XCTAssertLessThanOrEqual(cache.bytes, 1000) }
        // Too large for the budget: not stored.
        cache.set(-1, "huge", cost: 5000)
        XCTAssertNil(cache.get(-1))
        // Replacing an entry adjusts the byte count.
        cache.set(399, "y", cost: 50)
        XCTAssertEqual(cache.get(399), "y")
        XCTAssertLessThanOrEqual(cache.bytes, 1000)
    }

    /// A burst of one-off entries (cold resolves) followed by entries that will be used (a sweep
    /// of subordinate statements): the burst is evicted first, oldest first, and every later
    /// entry stays while the budget holds them (a CLOCK over a swap-removed array evicted the
    /// newest entries as often as the stale ones).
    func testClockCacheEvictsTheOldestUnusedEntriesFirst() {
        let cache = ClockCache<Int, Int>(budget: 1000, shards: 1)
        for i in 0..<10 { cache.set(i, i, cost: 100) }
        for i in 10..<20 {
            cache.set(i, i, cost: 100)
            XCTAssertNil(cache.get(i - 10), "the oldest unused entry goes first")
        }
        XCTAssertEqual((10..<20).map { cache.get($0) }, Array(10..<20), "every newer entry is still there")
        // All of 10..<20 were just visited: the hand clears their bits and then takes the oldest.
        for i in 20..<25 { cache.set(i, i, cost: 100) }
        // Visited entries get a second chance; the hand moves on to the next unvisited one.
        _ = cache.get(15)
        _ = cache.get(16)
        for i in 25..<28 { cache.set(i, i, cost: 100) }
        XCTAssertEqual((10..<28).filter { cache.get($0) != nil }, [15, 16] + Array(20..<28), "visited entries survive a pass")
        XCTAssertEqual(cache.count, 10)
        XCTAssertEqual(cache.bytes, 1000)
        // Removals in the middle keep the list consistent. Then a flood of one-off entries: the
        // entries used before it (all six left were just visited) outlive it, and the flood
        // evicts itself oldest first, the newest staying.
        for i in stride(from: 10, to: 25, by: 2) { cache.remove(i) }
        XCTAssertEqual(cache.count, 6)
        for i in 100..<300 { cache.set(i, i, cost: 100); XCTAssertLessThanOrEqual(cache.bytes, 1000) }
        XCTAssertEqual((0..<300).filter { cache.get($0) != nil }, [15, 21, 23, 25, 26, 27, 296, 297, 298, 299])
        XCTAssertEqual(cache.count, 10)
    }

    /// The index (open addressing with backward-shift deletion) stays consistent through
    /// growth, removals in the middle of probe runs, and moves of the last entry into holes:
    /// checked against a dictionary after every step, with keys that collide in the low bits.
    func testClockCacheIndexAgreesWithADictionary() {
        struct Colliding: Hashable, Sendable {
            let n: Int
            func hash(into hasher: inout Hasher) { hasher.combine(n % 7) }
        }
        let cache = ClockCache<Colliding, Int>(budget: 1 << 30, shards: 2)
        var reference: [Int: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        for step in 0..<4000 {
            let n = Int.random(in: 0..<300, using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0, 1:
                cache.set(Colliding(n: n), step, cost: 1)
                reference[n] = step
            default:
                cache.remove(Colliding(n: n))
                reference[n] = nil
            }
            if step % 97 == 0 {
                for k in 0..<300 { XCTAssertEqual(cache.get(Colliding(n: k)), reference[k], "key \(k) after step \(step)") }
            }
        }
        XCTAssertEqual(cache.count, reference.count)
        XCTAssertEqual(cache.bytes, reference.count)
    }
}
