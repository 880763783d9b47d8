import Support
import XCTest
@testable import Federation

/// The byte-budgeted caches: eviction order, budget, refresh.
final class SignedStatementCacheTests: XCTestCase {
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

    /// What an entry is counted at is what it takes: the JWT's storage, the cache's own
    /// bookkeeping, and the key's strings unless they are the host's. At the default budget
    /// every subordinate statement of 100,000 leaves fits (their JWTs are ~740 bytes).
    func testEntriesAreCountedAtWhatTheyTake() {
        let jwt = SignedStatementCache.exactCopy(String(repeating: "a", count: 745))
        let value = SignedJWT(compact: jwt, type: FederationType.entityStatement, refreshAt: 0)
        let key = StatementKey.subordinateStatement(issuer: "http://127.0.0.1:18082/int-99", subject: "http://127.0.0.1:18082/leaf-99999")
        let shared = SignedStatementCache.cost(of: value, key: key, keyShared: true)
        XCTAssertEqual(shared, 800 + ClockCache<StatementKey, SignedJWT>.entryOverhead, "745 bytes, a 32-byte header and a NUL in one 800-byte chunk")
        XCTAssertLessThan(ClockCache<StatementKey, SignedJWT>.entryOverhead, 130)
        XCTAssertEqual(SignedStatementCache.cost(of: value, key: key, keyShared: false), shared + 80 + 80, "two 29- and 33-byte strings")
        XCTAssertEqual(SignedStatementCache.heapBytes("short"), 0, "small strings live inline")
        XCTAssertLessThan(100_000 * shared, SignedStatementCache.defaultBudget * 95 / 100)
    }

    func testSignedStatementCacheEvictsUnderItsByteBudget() throws {
        let cache = SignedStatementCache(budget: 64 * 1024)
        let jwt = String(repeating: "a", count: 1000)
        for i in 0..<500 {
            _ = try cache.value(for: .entityConfiguration("https://e.example/\(i)"), now: 0, type: FederationType.jwkSet) { () throws(FederationError) in (jwt, 100) }
        }
        XCTAssertLessThanOrEqual(cache.bytes, 64 * 1024)
        XCTAssertGreaterThan(cache.count, 20)
        XCTAssertLessThan(cache.count, 64)
    }

    func testEntriesAreRebuiltOnceStale() throws {
        let cache = SignedStatementCache()
        var builds = 0
        func get(_ now: Int64) throws -> String {
            try cache.value(for: .historicalKeys("x"), now: now, type: FederationType.jwkSet) { () throws(FederationError) in
                builds += 1
                return ("jwt\(builds)", 100)
            }.compact
        }
        XCTAssertEqual(try get(0), "jwt1")
        XCTAssertEqual(try get(99), "jwt1")
        XCTAssertEqual(try get(100), "jwt2", "served until refreshAt, then signed again")
        XCTAssertEqual(builds, 2)
        XCTAssertThrowsError(try cache.value(for: .historicalKeys("y"), now: 0, type: FederationType.jwkSet) { () throws(FederationError) -> (String, Int64) in
            throw .notFound("no")
        })
        XCTAssertEqual(SignedStatementCache.refreshTime(iat: 0, exp: 1000), 900)
    }

    func testEntityStatementsAreParsedOnlyForChainBuilding() throws {
        let clock = ManualClock(1_800_000_000)
        let (host, _, _) = try FederationFixture.demo(clock: clock)
        let ta = FederationFixture.trustAnchor
        // Served by an endpoint: no parsed statement is built or kept.
        let served = try host.signedEntityConfiguration(of: ta)
        XCTAssertNil(served.statement)
        // Asked for by chain building: parsed from the cached JWT once, then kept with it.
        let signed = try host.signedEntityConfiguration(of: ta, parsed: true)
        XCTAssertEqual(signed.compact, served.compact, "the cached JWT is reused, not signed again")
        XCTAssertEqual(signed.statement?.subject, ta)
        XCTAssertEqual(signed.statement?.compact, signed.compact)
        XCTAssertNotNil(try host.signedEntityConfiguration(of: ta).statement, "the parsed statement stays cached")
        XCTAssertNil(try host.signedHistoricalKeys(of: ta).statement)
    }
}
