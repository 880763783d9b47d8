import Store
import XCTest

final class KeyHistoryRepositoryTests: XCTestCase {
    private let entity = "https://ta.example.org"
    private let jwk = #"{"kty":"EC","crv":"P-256","kid":"k1","x":"AA","y":"BB"}"#

    func testKeyLifeCycle() throws {
        let keys = KeyHistoryRepository(database: try Database(path: ":memory:"))
        try keys.recordActive(entity: entity, kid: "k2", jwk: "{}", createdAt: 200)
        try keys.recordActive(entity: entity, kid: "k1", jwk: jwk, createdAt: 100)
        try keys.recordActive(entity: entity, kid: "k3", jwk: "{}", createdAt: 300)
        try keys.recordActive(entity: "https://other.example.org", kid: "k1", jwk: "{}", createdAt: 50)

        XCTAssertEqual(try keys.keys(entity: entity).map(\.kid), ["k1", "k2", "k3"])
        XCTAssertEqual(try keys.historical(entity: entity), [])

        try keys.retire(entity: entity, kid: "k1", at: 400, expiresAt: 900)
        try keys.revoke(entity: entity, kid: "k2", at: 450, reason: "compromised")

        let historical = try keys.historical(entity: entity)
        XCTAssertEqual(historical, [
            KeyRecord(entity: entity, kid: "k1", jwk: jwk, createdAt: 100, retiredAt: 400, expiresAt: 900),
            KeyRecord(entity: entity, kid: "k2", jwk: "{}", createdAt: 200,
                      revokedAt: 450, revocationReason: "compromised"),
        ])
        XCTAssertEqual(try keys.keys(entity: entity).count, 3)
    }

    func testRecordingAKnownKeyAgainChangesNothing() throws {
        let keys = KeyHistoryRepository(database: try Database(path: ":memory:"))
        try keys.recordActive(entity: entity, kid: "k1", jwk: jwk, createdAt: 100)
        try keys.retire(entity: entity, kid: "k1", at: 400, expiresAt: 900)
        try keys.recordActive(entity: entity, kid: "k1", jwk: "{}", createdAt: 500)
        XCTAssertEqual(try keys.keys(entity: entity),
                       [KeyRecord(entity: entity, kid: "k1", jwk: jwk, createdAt: 100, retiredAt: 400, expiresAt: 900)])
    }

    func testRetiringAndRevokingAgainKeepTheFirstTime() throws {
        let keys = KeyHistoryRepository(database: try Database(path: ":memory:"))
        try keys.recordActive(entity: entity, kid: "k1", jwk: jwk, createdAt: 100)
        try keys.retire(entity: entity, kid: "k1", at: 400, expiresAt: 900)
        try keys.retire(entity: entity, kid: "k1", at: 500, expiresAt: 1_000)
        try keys.revoke(entity: entity, kid: "k1", at: 600, reason: "first")
        try keys.revoke(entity: entity, kid: "k1", at: 700, reason: "second")
        let key = try XCTUnwrap(try keys.keys(entity: entity).first)
        XCTAssertEqual(key.retiredAt, 400)
        XCTAssertEqual(key.expiresAt, 1_000)
        XCTAssertEqual(key.revokedAt, 600)
        XCTAssertEqual(key.revocationReason, "first")
    }

    func testUnknownKeyIsNotFound() throws {
        let keys = KeyHistoryRepository(database: try Database(path: ":memory:"))
        XCTAssertThrowsError(try keys.retire(entity: entity, kid: "nope", at: 1, expiresAt: 2)) {
            XCTAssertEqual($0 as? StoreError, .notFound)
        }
        XCTAssertThrowsError(try keys.revoke(entity: entity, kid: "nope", at: 1, reason: "x")) {
            XCTAssertEqual($0 as? StoreError, .notFound)
        }
    }
}

extension KeyHistoryRepositoryTests {
    func testRevokingWithoutAReasonStoresNone() throws {
        let keys = KeyHistoryRepository(database: try Database(path: ":memory:"))
        try keys.recordActive(entity: entity, kid: "k1", jwk: jwk, createdAt: 100)
        try keys.revoke(entity: entity, kid: "k1", at: 600, reason: nil)
        let key = try XCTUnwrap(try keys.keys(entity: entity).first)
        XCTAssertEqual(key.revokedAt, 600)
        XCTAssertNil(key.revocationReason)
        // A later revocation with a reason does not rewrite the first one.
        try keys.revoke(entity: entity, kid: "k1", at: 700, reason: "compromised")
        XCTAssertNil(try keys.keys(entity: entity).first?.revocationReason)
    }
}
