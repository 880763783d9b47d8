@testable import Federation
import Support
import JSON
import Store
import XCTest

final class TrustMarkListTests: XCTestCase {
    typealias F = FederationFixture
    let start: Int64 = 1_700_000_000

    func testListsHoldersWithAndWithoutSub() throws {
        let (host, _, _) = try F.demo(clock: ManualClock(start))
        XCTAssertEqual(try host.trustMarkedEntities(issuer: F.trustAnchor, type: F.basicMark, subject: nil), [F.pidProvider])
        XCTAssertEqual(try host.trustMarkedEntities(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider), [F.pidProvider])
        XCTAssertEqual(try host.trustMarkedEntities(issuer: F.trustAnchor, type: F.basicMark, subject: F.relyingParty), [])
    }

    func testRevokedHoldersAreLeftOut() throws {
        let (host, _, _) = try F.demo(clock: ManualClock(start))
        _ = try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        try host.revokeTrustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider, reason: "audit failed")
        XCTAssertEqual(try host.trustMarkedEntities(issuer: F.trustAnchor, type: F.basicMark, subject: nil), [])
        XCTAssertEqual(try host.trustMarkedEntities(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider), [])
    }

    /// A subject dropped from the configuration keeps its issued mark until that expires.
    func testIssuedMarksCountUntilTheyExpire() throws {
        let clock = ManualClock(start)
        let database = try Database(path: ":memory:")
        let (before, keys, _) = try F.demo(clock: clock, database: database)
        _ = try before.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        let noSubjects = [F.trustAnchorEntity(trustMarksIssued: [TrustMarkIssuance(trustMarkType: F.basicMark, subjects: [])])]
        let (after, _, _) = try F.demo(clock: clock, entities: noSubjects, keys: keys, database: database)
        XCTAssertEqual(try after.trustMarkedEntities(issuer: F.trustAnchor, type: F.basicMark, subject: nil), [F.pidProvider])
        XCTAssertEqual(try after.trustMarkedEntities(issuer: F.trustAnchor, type: F.basicMark, subject: F.relyingParty), [])
        clock.advance(86_400)
        XCTAssertEqual(try after.trustMarkedEntities(issuer: F.trustAnchor, type: F.basicMark, subject: nil), [])
    }

    func testTypeTheIssuerDoesNotIssueIsNotFound() throws {
        let (host, _, _) = try F.demo(clock: ManualClock(start))
        XCTAssertThrowsError(try host.trustMarkedEntities(issuer: F.trustAnchor, type: F.base + "/marks/unknown", subject: nil)) {
            XCTAssertEqual(($0 as? FederationError)?.code, "not_found")
        }
        XCTAssertThrowsError(try host.trustMarkedEntities(issuer: F.intermediate, type: F.basicMark, subject: nil)) {
            XCTAssertEqual(($0 as? FederationError)?.code, "not_found")
        }
    }
}
