import Support
import XCTest
@testable import Federation

/// The byte-budgeted caches: eviction order, budget, refresh.
final class SignedStatementCacheTests: XCTestCase {
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
