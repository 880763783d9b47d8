import Store
import XCTest

final class StatementCacheRepositoryTests: XCTestCase {
    private let url = "https://ta.example.org/fetch?sub=https%3A%2F%2Frp.example.org"

    func testFreshEntryIsReturnedAndExpiredEntryIsNot() throws {
        let cache = StatementCacheRepository(database: try Database(path: ":memory:"))
        try cache.put(url: url, body: "eyJ.a.b", expiresAt: 2_000, fetchedAt: 1_000)
        XCTAssertEqual(try cache.get(url: url, now: 1_999), "eyJ.a.b")
        XCTAssertNil(try cache.get(url: url, now: 2_000), "expires at exp, like a JWT")
        XCTAssertNil(try cache.get(url: url, now: 5_000))
        XCTAssertNil(try cache.get(url: "https://unknown.example.org", now: 0))
    }

    func testPutReplaces() throws {
        let cache = StatementCacheRepository(database: try Database(path: ":memory:"))
        try cache.put(url: url, body: "old", expiresAt: 2_000, fetchedAt: 1_000)
        try cache.put(url: url, body: "new", expiresAt: 3_000, fetchedAt: 1_500)
        XCTAssertEqual(try cache.get(url: url, now: 2_500), "new")
    }

    func testPurgeDeletesOnlyExpired() throws {
        let database = try Database(path: ":memory:")
        let cache = StatementCacheRepository(database: database)
        try cache.put(url: "https://a.example.org", body: "a", expiresAt: 1_000, fetchedAt: 0)
        try cache.put(url: "https://b.example.org", body: "b", expiresAt: 3_000, fetchedAt: 0)
        XCTAssertEqual(try cache.purge(now: 2_000), 1)
        XCTAssertEqual(try database.query("SELECT url FROM statement_cache").compactMap { $0.text("url") },
                       ["https://b.example.org"])
    }
}
