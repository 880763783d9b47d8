@testable import Federation
import Support
import JOSE
import JSON
import XCTest

final class HistoricalKeysIssuerTests: XCTestCase {
    typealias F = FederationFixture
    let start: Int64 = 1_700_000_000

    func testSignedJWKSetWithNoHistoryYet() throws {
        let (host, keys, _) = try F.demo(clock: ManualClock(start))
        let (jws, claims) = try F.decode(host.historicalKeys(of: F.trustAnchor))
        XCTAssertEqual(jws.type, "jwk-set+jwt")
        XCTAssertEqual(jws.keyID, try keys.signingKey(for: F.trustAnchor).kid)
        XCTAssertEqual(claims, ["iss": .string(F.trustAnchor), "iat": .int(start), "keys": []])
        XCTAssertThrowsError(try host.historicalKeys(of: F.base + "/nobody")) {
            XCTAssertEqual(($0 as? FederationError)?.code, "not_found")
        }
    }

    func testRotatedAndRevokedKeysArePublished() throws {
        let clock = ManualClock(start)
        let keys = InMemoryKeys(clock: clock)
        let oldKid = try keys.rotate(F.trustAnchor)
        clock.advance(100)
        let secondKid = try keys.rotate(F.trustAnchor)
        try keys.revoke(F.trustAnchor, kid: secondKid, reason: "compromised")
        // The server replaces its host after a key change, which also drops cached statements.
        let (host, _, _) = try F.demo(clock: clock, keys: keys)

        let (jws, claims) = try F.decode(host.historicalKeys(of: F.trustAnchor))
        XCTAssertEqual(jws.keyID, try keys.signingKey(for: F.trustAnchor).kid)
        XCTAssertNoThrow(try jws.verify(keys: keys.publicKeys(for: F.trustAnchor), allowList: AlgorithmPolicy.federationDefault,
                                        expectedType: "jwk-set+jwt"))
        let published = try XCTUnwrap(claims["keys"]?.arrayValue)
        XCTAssertEqual(published.compactMap { $0["kid"]?.stringValue }, [oldKid, secondKid])
        XCTAssertEqual(published[0]["exp"], .int(start))
        XCTAssertEqual(published[0]["iat"], .int(start))
        XCTAssertNil(published[0]["revoked"])
        XCTAssertEqual(published[1]["exp"], .int(start + 100))
        XCTAssertEqual(published[1]["revoked"], ["revoked_at": .int(start + 100), "reason": "compromised"])
        for key in published { XCTAssertNil(key["d"], "never private material") }
        XCTAssertFalse(try keys.publicKeys(for: F.trustAnchor).keys.contains { $0.kid == oldKid })
    }

    /// A mark signed before a rotation stays `active` at the status endpoint; one signed with a
    /// key revoked since is `invalid`.
    func testStatusVerifiesWithRetiredButNotRevokedKeys() throws {
        let clock = ManualClock(start)
        let keys = InMemoryKeys(clock: clock)
        let (host, _, _) = try F.demo(clock: clock, keys: keys)
        let mark = try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        let kid = try keys.rotate(F.trustAnchor)
        let status = { try F.decode(host.trustMarkStatus(issuer: F.trustAnchor, trustMark: mark)).claims["status"] }
        XCTAssertEqual(try status(), "active")
        try keys.revoke(F.trustAnchor, kid: kid, reason: "compromised")
        XCTAssertEqual(try status(), "invalid")
    }
}
