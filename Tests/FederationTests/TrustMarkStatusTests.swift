@testable import Federation
import Support
import JOSE
import JSON
import XCTest

final class TrustMarkStatusTests: XCTestCase {
    typealias F = FederationFixture
    let start: Int64 = 1_700_000_000

    private func status(_ host: FederationHost, _ mark: String, issuer: String = F.trustAnchor) throws -> JSONValue? {
        try F.decode(host.trustMarkStatus(issuer: issuer, trustMark: mark)).claims["status"]
    }

    func testActiveResponseIsASignedStatusJWT() throws {
        let clock = ManualClock(start)
        let (host, keys, _) = try F.demo(clock: clock)
        let mark = try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        clock.advance(10)
        let (jws, claims) = try F.decode(host.trustMarkStatus(issuer: F.trustAnchor, trustMark: mark))
        XCTAssertEqual(jws.type, "trust-mark-status-response+jwt")
        XCTAssertNoThrow(try jws.verify(keys: keys.publicKeys(for: F.trustAnchor), allowList: AlgorithmPolicy.federationDefault,
                                        expectedType: "trust-mark-status-response+jwt"))
        XCTAssertEqual(claims, [
            "iss": .string(F.trustAnchor), "iat": .int(start + 10), "trust_mark": .string(mark), "status": "active",
        ])
    }

    func testExpiredOnceExpHasPassed() throws {
        let clock = ManualClock(start)
        let (host, _, _) = try F.demo(clock: clock)
        let mark = try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        clock.advance(86_400 - 1)
        XCTAssertEqual(try status(host, mark), "active")
        clock.advance(1)
        XCTAssertEqual(try status(host, mark), "expired")
    }

    func testRevoked() throws {
        let (host, _, _) = try F.demo(clock: ManualClock(start))
        let mark = try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        try host.revokeTrustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider, reason: "audit failed")
        XCTAssertEqual(try status(host, mark), "revoked")
    }

    func testTamperedMalformedOrMistypedMarksAreInvalid() throws {
        let (host, keys, _) = try F.demo(clock: ManualClock(start))
        let mark = try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        let tampered = try F.tampered(mark) { $0["sub"] = .string(F.relyingParty) }
        XCTAssertEqual(try status(host, tampered), "invalid")
        XCTAssertEqual(try status(host, "not a jwt"), "invalid")
        XCTAssertEqual(try status(host, mark + "x"), "invalid")

        let claims = try F.decode(mark).claims
        let mistyped = try keys.signingKey(for: F.trustAnchor).sign(claims, type: "JWT")
        XCTAssertEqual(try status(host, mistyped), "invalid")
        // Claiming our issuer, but signed by someone else's key.
        let foreign = try keys.signingKey(for: F.intermediate).sign(claims, type: "trust-mark+jwt")
        XCTAssertEqual(try status(host, foreign), "invalid")
    }

    /// Section 8.4.2: a mark this issuer did not issue or does not know of is a 404.
    func testMarksOfOtherIssuersOrWithoutRecordAreNotFound() throws {
        let (host, keys, _) = try F.demo(clock: ManualClock(start))
        let mark = try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        var claims = try F.decode(mark).claims
        let unrecorded = try keys.signingKey(for: F.trustAnchor).sign(claims.merging(["iat": .int(start + 1)]) { $1 }, type: "trust-mark+jwt")
        XCTAssertThrowsError(try host.trustMarkStatus(issuer: F.trustAnchor, trustMark: unrecorded)) {
            XCTAssertEqual(($0 as? FederationError)?.code, "not_found")
        }
        claims["iss"] = .string(F.intermediate)
        let otherIssuer = try keys.signingKey(for: F.intermediate).sign(claims, type: "trust-mark+jwt")
        XCTAssertThrowsError(try host.trustMarkStatus(issuer: F.trustAnchor, trustMark: otherIssuer)) {
            XCTAssertEqual(($0 as? FederationError)?.code, "not_found")
        }
        XCTAssertThrowsError(try host.trustMarkStatus(issuer: F.intermediate, trustMark: mark), "the intermediate issues no marks") {
            XCTAssertEqual(($0 as? FederationError)?.code, "not_found")
        }
    }
}
