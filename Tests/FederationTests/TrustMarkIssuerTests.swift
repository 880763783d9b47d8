import Support
import Cryptography
import Foundation
@testable import Federation
import JOSE
import JSON
import Store
import XCTest

final class TrustMarkIssuerTests: XCTestCase {
    typealias F = FederationFixture
    let start: Int64 = 1_700_000_000

    func testMarkHasTheClaimsAndHeaderOfSection7() throws {
        let clock = ManualClock(start)
        let (host, keys, _) = try F.demo(clock: clock)
        let jwt = try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        let (jws, claims) = try F.decode(jwt)

        XCTAssertEqual(jws.type, "trust-mark+jwt")
        XCTAssertEqual(jws.keyID, try keys.signingKey(for: F.trustAnchor).kid)
        XCTAssertEqual(claims["iss"], .string(F.trustAnchor))
        XCTAssertEqual(claims["sub"], .string(F.pidProvider))
        XCTAssertEqual(claims["trust_mark_type"], .string(F.basicMark))
        XCTAssertEqual(claims["iat"], .int(start))
        XCTAssertEqual(claims["exp"], .int(start + 86_400), "the issuer's lifetime when the issuance sets none")
        XCTAssertNil(claims["delegation"], "no owner is configured for the type")
        XCTAssertNil(claims["logo_uri"])
        XCTAssertNil(claims["ref"])
        XCTAssertNoThrow(try jws.verify(keys: keys.publicKeys(for: F.trustAnchor), allowList: AlgorithmPolicy.federationDefault,
                                        expectedType: "trust-mark+jwt"))
    }

    func testIssuanceLifetimeLogoAndRef() throws {
        let issuance = TrustMarkIssuance(trustMarkType: F.basicMark, subjects: [F.pidProvider], lifetime: 3_600,
                                         logoURI: "https://tb.example/logo.svg", ref: "https://tb.example/basic.html")
        let entities = [F.trustAnchorEntity(trustMarksIssued: [issuance]), F.intermediateEntity(), F.pidProviderEntity]
        let (host, _, _) = try F.demo(clock: ManualClock(start), entities: entities)
        let claims = try F.decode(host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)).claims
        XCTAssertEqual(claims["exp"], .int(start + 3_600))
        XCTAssertEqual(claims["logo_uri"], "https://tb.example/logo.svg")
        XCTAssertEqual(claims["ref"], "https://tb.example/basic.html")
    }

    func testOnlyConfiguredMarksAreIssued() throws {
        let (host, _, _) = try F.demo(clock: ManualClock(start))
        XCTAssertThrowsError(try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.relyingParty)) {
            XCTAssertEqual(($0 as? FederationError)?.code, "not_found")
        }
        XCTAssertThrowsError(try host.trustMark(issuer: F.trustAnchor, type: F.base + "/marks/other", subject: F.pidProvider)) {
            XCTAssertEqual(($0 as? FederationError)?.code, "not_found")
        }
        XCTAssertThrowsError(try host.trustMark(issuer: F.intermediate, type: F.basicMark, subject: F.pidProvider)) {
            XCTAssertEqual(($0 as? FederationError)?.code, "not_found")
        }
    }

    func testMarkIsEmbeddedInTheSubjectsEntityConfiguration() throws {
        let (host, _, _) = try F.demo(clock: ManualClock(start))
        let pid = try EntityStatement.decode(host.entityConfiguration(of: F.pidProvider))
        let mark = try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        XCTAssertEqual(pid.trustMarks, [TrustMarkEntry(trustMarkType: F.basicMark, trustMark: mark)])
        XCTAssertEqual(host.trustMarkEntries(for: F.pidProvider).map(\.trustMark), [mark])
        XCTAssertEqual(try EntityStatement.decode(host.entityConfiguration(of: F.relyingParty)).trustMarks, [])
    }

    func testMarkIsCachedUntilNearExpiryAndEachNewOneIsRecorded() throws {
        let clock = ManualClock(start)
        let (host, _, _) = try F.demo(clock: clock)
        let first = try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        clock.advance(3_600)
        XCTAssertEqual(try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider), first)
        clock.advance(86_400 * 9 / 10)
        let second = try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        XCTAssertNotEqual(second, first, "re-signed once 90% of the lifetime has passed")

        let repository = TrustMarkRepository(database: host.database)
        for jwt in [first, second] {
            let id = Digest.sha256(Array(jwt.utf8)).map { String(format: "%02x", $0) }.joined()
            let record = try XCTUnwrap(repository.find(id: id))
            XCTAssertEqual(record.issuer, F.trustAnchor)
            XCTAssertEqual(record.subject, F.pidProvider)
            XCTAssertEqual(record.trustMarkType, F.basicMark)
            XCTAssertEqual(record.expiresAt, try F.decode(jwt).claims["exp"]?.intValue)
        }
    }

    func testRevokedMarkIsNoLongerIssuedNorEmbedded() throws {
        let clock = ManualClock(start)
        let database = try Database(path: ":memory:")
        let (host, keys, _) = try F.demo(clock: clock, database: database)
        let mark = try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)

        XCTAssertEqual(try host.revokeTrustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider, reason: "audit failed"), 1)
        XCTAssertThrowsError(try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)) {
            XCTAssertEqual(($0 as? FederationError)?.code, "not_found")
        }
        XCTAssertEqual(host.trustMarkEntries(for: F.pidProvider), [])
        // The server replaces its host after a revocation; the new one builds configurations without the mark.
        let (replaced, _, _) = try F.demo(clock: clock, keys: keys, database: database)
        XCTAssertEqual(try EntityStatement.decode(replaced.entityConfiguration(of: F.pidProvider)).trustMarks, [])
        XCTAssertEqual(try F.decode(replaced.trustMarkStatus(issuer: F.trustAnchor, trustMark: mark)).claims["status"], "revoked")
    }

    func testRevokingATypeTheIssuerDoesNotIssueIsNotFound() throws {
        let (host, _, _) = try F.demo(clock: ManualClock(start))
        XCTAssertThrowsError(try host.revokeTrustMark(issuer: F.intermediate, type: F.basicMark, subject: F.pidProvider, reason: "x")) {
            XCTAssertEqual(($0 as? FederationError)?.code, "not_found")
        }
    }
}
