@testable import Explorer
import Federation
import JOSE
import JSON
import Store
import Support
import XCTest

/// The entity page's model: the configuration decoded with its signature verdict, trust marks
/// with their live status, a page of subordinates, historical keys, and failures as statuses.
final class EntityModelTests: XCTestCase {
    typealias F = EntityModelFixture
    let start: Int64 = 1_800_000_000

    private func make(leaves: Int = 0, markLifetime: Int64? = nil) throws -> (FederationHost, ManualClock, MemoryKeys, Database) {
        let clock = ManualClock(start)
        let keys = MemoryKeys()
        let db = try Database(path: ":memory:")
        return (F.host(clock: clock, keys: keys, database: db, leaves: leaves, markLifetime: markLifetime), clock, keys, db)
    }

    private func view(_ host: FederationHost, _ id: String, offset: Int = 0) throws -> EntityView {
        try EntityView.build(host: host, entityID: id, offset: offset, baseURL: F.base, deadline: .after(seconds: 5))
    }

    func testConfigurationIsDecodedAndItsSelfSignatureVerifiesWithTheNamedKey() throws {
        let (host, _, keys, _) = try make()
        let v = try view(host, F.leaf)
        let kid = try XCTUnwrap(keys.publicKeys(for: F.leaf).keys.first?.kid)
        XCTAssertTrue(v.signature.verifies, v.signature.detail)
        XCTAssertEqual(v.signature.keyID, kid)
        XCTAssertEqual(v.configuration.keyID, kid)
        XCTAssertEqual(v.configuration.servedBy, F.leaf + "/.well-known/openid-federation")
        XCTAssertEqual(v.configuration.times.map(\.claim), ["iat", "exp"])
        XCTAssertEqual(v.configuration.times.first?.seconds, start)
        XCTAssertEqual(v.keys.map(\.kid), [kid])
        XCTAssertEqual(v.keys.first?.crv, "P-256")
        XCTAssertEqual(v.authorityHints, [F.intermediate])
        XCTAssertEqual(v.metadata.map(\.type), ["federation_entity", "openid_relying_party"])
        XCTAssertNil(v.subordinates, "a leaf has no subordinates")
        XCTAssertEqual(v.configuration.claims["iss"]?.stringValue, F.leaf)
    }

    func testASignatureByAnotherKeyDoesNotVerify() throws {
        let (host, _, _, _) = try make()
        let leafEC = try host.entityConfiguration(of: F.leaf)
        let other = try host.entityConfiguration(of: F.intermediate)
        // The leaf's header and claims with the intermediate's signature: decodes, does not verify.
        let parts = leafEC.split(separator: ".").map(String.init)
        let forged = [parts[0], parts[1], String(other.split(separator: ".")[2])].joined(separator: ".")
        let statement = try EntityStatement.decode(forged)
        let verdict = SignatureVerdict.check(statement, with: statement.jwks, whose: "its own jwks")
        XCTAssertFalse(verdict.verifies)
        let unknown = SignatureVerdict.check(statement, with: try host.sourcedEntityConfiguration(of: F.ta, deadline: .distant).jwks, whose: "TA")
        XCTAssertFalse(unknown.verifies)
        XCTAssertTrue(unknown.detail.contains("no key with kid"), unknown.detail)
    }

    func testTrustMarkStatusesActiveInvalidExpiredRevoked() throws {
        let (host, clock, keys, db) = try make(markLifetime: 600)
        let v = try view(host, F.leaf)
        XCTAssertEqual(v.trustMarks.count, 1)
        let mark = try XCTUnwrap(v.trustMarks.first)
        XCTAssertEqual(mark.status.status, .active, mark.status.reason)
        XCTAssertEqual(mark.issuer, F.ta)
        XCTAssertEqual(mark.jwt?.claims["sub"]?.stringValue, F.leaf)
        let entry = TrustMarkEntry(trustMarkType: F.mark, trustMark: try XCTUnwrap(mark.jwt?.compact))

        // Another subject's claims under the same signature: invalid.
        let parts = entry.trustMark.split(separator: ".").map(String.init)
        var claims = try XCTUnwrap(mark.jwt?.claims.objectValue)
        claims["exp"] = .int(start + 10_000)
        let forged = [parts[0], Base64URL.encode(JSONValue.object(claims).bytes), parts[2]].joined(separator: ".")
        let invalid = host.liveTrustMarkStatus(TrustMarkEntry(trustMarkType: F.mark, trustMark: forged), subject: F.leaf, deadline: .distant)
        XCTAssertEqual(invalid.status, .invalid, invalid.reason)

        // Revoked by its (hosted) issuer: a new host over the same database, as after a reload.
        try TrustMarkRepository(database: db).revoke(issuer: F.ta, trustMarkType: F.mark, subject: F.leaf, at: start, reason: "lab")
        let reloaded = F.host(clock: clock, keys: keys, database: db, markLifetime: 600)
        XCTAssertEqual(reloaded.liveTrustMarkStatus(entry, subject: F.leaf, deadline: .distant).status, .revoked)
        let after = try view(reloaded, F.leaf)
        XCTAssertTrue(after.trustMarks.isEmpty, "a revoked mark leaves the configuration")
        XCTAssertEqual(after.revokedMarks.map(\.reason), ["lab"])

        clock.advance(601)
        XCTAssertEqual(host.liveTrustMarkStatus(entry, subject: F.leaf, deadline: .distant).status, .expired)
    }

    func testSubordinatesArePagedAHundredAtATime() throws {
        let (host, _, _, _) = try make(leaves: 250)
        let first = try XCTUnwrap(try view(host, F.intermediate).subordinates)
        XCTAssertEqual(first.total, 251)
        XCTAssertEqual(first.rows.count, 100)
        XCTAssertEqual(first.rows.first?.entityID, F.base + "/l0000")
        XCTAssertNil(first.previousOffset)
        XCTAssertEqual(first.nextOffset, 100)
        XCTAssertNotNil(first.rows.first?.expiresAt, "each row reads its subordinate statement")
        let last = try XCTUnwrap(try view(host, F.intermediate, offset: 200).subordinates)
        XCTAssertEqual(last.rows.count, 51)
        XCTAssertEqual(last.rows.last?.entityID, F.leaf)
        XCTAssertEqual(last.previousOffset, 100)
        XCTAssertNil(last.nextOffset)
        XCTAssertEqual([last.firstShown, last.lastShown], [201, 251])
        XCTAssertEqual(try view(host, F.intermediate, offset: 99_999).subordinates?.offset, 200)
        XCTAssertEqual(SubordinatePage.clampedOffset(-3, total: 10), 0)
        XCTAssertEqual(SubordinatePage.clampedOffset(100, total: 100), 0)
        XCTAssertEqual(SubordinatePage.clampedOffset(100, total: 101), 100)
        XCTAssertEqual(SubordinatePage.clampedOffset(5, total: 0), 0)
    }

    func testHistoricalKeysShowTheRevocationReason() throws {
        let (host, clock, keys, db) = try make()
        let oldKid = try XCTUnwrap(keys.publicKeys(for: F.leaf).keys.first?.kid)
        _ = try view(host, F.leaf)
        try keys.revokeCurrent(F.leaf, reason: "compromised", at: start)
        let v = try view(F.host(clock: clock, keys: keys, database: db), F.leaf)
        let h = try XCTUnwrap(v.historicalKeys)
        XCTAssertEqual(h.keys.map(\.kid), [oldKid])
        XCTAssertEqual(h.keys.first?.reason, "compromised")
        XCTAssertEqual(h.keys.first?.revokedAt, start)
        XCTAssertEqual(h.endpoint, F.leaf + "/historical-keys")
        XCTAssertTrue(v.signature.verifies)
        XCTAssertNotEqual(v.signature.keyID, oldKid)
    }

    func testFailuresAreStatuses() throws {
        let (host, _, _, _) = try make()
        func failure(_ id: String) -> ExplorerFailure? {
            do { _ = try view(host, id); return nil } catch { return error as? ExplorerFailure }
        }
        XCTAssertEqual(failure("https://elsewhere.example/x")?.status, 400, "outside the allow-list")
        XCTAssertThrowsError(try ExplorerFailure.checkEntityID("javascript:alert(1)"))
        XCTAssertThrowsError(try ExplorerFailure.checkEntityID("https://a.example/x?y=1"))
        XCTAssertThrowsError(try ExplorerFailure.checkEntityID(nil))
        XCTAssertEqual(try ExplorerFailure.checkEntityID("https://a.example/x"), "https://a.example/x")
        XCTAssertEqual(ExplorerFailure.fetching("x", .temporarilyUnavailable("timed out fetching u"), hosted: false).status, 502)
        XCTAssertEqual(ExplorerFailure.fetching("x", .temporarilyUnavailable("response from u is larger than 1 bytes"), hosted: false).status, 422)
        XCTAssertEqual(ExplorerFailure.fetching("x", .invalidTrustChain("malformed"), hosted: false).status, 422)
        XCTAssertEqual(ExplorerFailure.fetching("x", .notFound("no entity here"), hosted: true).status, 404)
    }

    func testPagesEscapeStatementData() throws {
        let (host, _, _, _) = try make()
        let page = EntityPage.render(try view(host, F.leaf), baseURL: F.base)
        XCTAssertFalse(page.contains("<script>alert"), "metadata HTML must be escaped")
        XCTAssertTrue(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        XCTAssertTrue(page.contains("<textarea readonly"), "raw JWT to copy")
        XCTAssertEqual(StatementView.visible("a\u{1}b\u{1b}c\u{202e}"), "a\\u{1}b\\u{1b}c\\u{202e}")
        XCTAssertEqual(StatementView.link("javascript:alert(1)", baseURL: F.base)["href"] as? Bool, false)
    }
}
