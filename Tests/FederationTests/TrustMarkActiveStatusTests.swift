@testable import Federation
import Support
import JOSE
import JSON
import Store
import XCTest

/// A status client answering from a closure, counting the requests it gets.
final class StubStatusClient: TrustMarkStatusClient, Sendable {
    private let respond: @Sendable (String, String) throws -> String
    private let log = Locked<[String]>([])

    init(_ respond: @escaping @Sendable (_ url: String, _ trustMark: String) throws -> String) { self.respond = respond }

    var requests: [String] { log.current }

    func post(_ url: String, form: [(name: String, value: String)]) throws(FederationError) -> String {
        log.withLock { $0.append(url) }
        guard form.count == 1, form[0].name == "trust_mark" else { throw .invalidRequest("unexpected form") }
        do { return try respond(url, form[0].value) } catch {
            throw .temporarilyUnavailable("\(error)")
        }
    }
}

/// Rule 5 of `TrustMarkVerifier`: the resolver keeps only marks that are active now.
final class TrustMarkActiveStatusTests: XCTestCase {
    typealias F = FederationFixture
    let start: Int64 = 1_700_000_000
    static let statusEndpoint = F.trustAnchor + "/trust-mark-status"

    private struct Setup {
        let clock: ManualClock
        /// Hosts the demo federation, the anchor (the mark's issuer) included.
        let issuerHost: FederationHost
        /// Hosts nothing: to it the anchor is a remote issuer.
        let client: FederationHost
        let keys: InMemoryKeys
        let anchor: EntityStatement
        let mark: String
    }

    private func setup() throws -> Setup {
        let clock = ManualClock(start)
        let (host, keys, fetcher) = try F.demo(clock: clock)
        let client = FederationHost(entities: [], keys: keys, clock: clock, database: try Database(path: ":memory:"), fetcher: fetcher)
        return Setup(clock: clock, issuerHost: host, client: client, keys: keys,
                     anchor: try EntityStatement.decode(host.entityConfiguration(of: F.trustAnchor)),
                     mark: try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider))
    }

    /// The issuer host's real status endpoint logic, as a remote server would run it.
    private func endpoint(_ s: Setup) -> StubStatusClient {
        let host = s.issuerHost
        return StubStatusClient { _, jwt in try host.trustMarkStatus(issuer: F.trustAnchor, trustMark: jwt) }
    }

    private func verify(_ s: Setup, on host: FederationHost? = nil, status: TrustMarkStatusChecker,
                        statusEndpoint: String? = statusEndpoint) throws -> TrustMarkVerification {
        let keys = try s.keys.publicKeys(for: F.trustAnchor)
        return (host ?? s.client).verifiedTrustMarks(
            [TrustMarkEntry(trustMarkType: F.basicMark, trustMark: s.mark)], subject: F.pidProvider, trustAnchor: s.anchor,
            issuer: { _ throws(FederationError) in TrustMarkIssuerTrust(keys: keys, statusEndpoint: statusEndpoint, trustAnchor: F.trustAnchor) },
            status: status, now: s.clock.now())
    }

    func testRevokedLocalMarkIsDropped() throws {
        let s = try setup()
        let checker = TrustMarkStatusChecker(client: nil)
        let before = try verify(s, on: s.issuerHost, status: checker)
        XCTAssertEqual(before.marks.map(\.entry.trustMark), [s.mark])
        XCTAssertFalse(before.dependsOnRemoteStatus, "a local issuer is checked against its own records")
        try s.issuerHost.revokeTrustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider, reason: "test")
        XCTAssertEqual(try verify(s, on: s.issuerHost, status: checker).marks.count, 0)
    }

    func testRemoteActiveMarkIsKeptAndFlagged() throws {
        let s = try setup()
        let client = endpoint(s)
        let result = try verify(s, status: TrustMarkStatusChecker(client: client))
        XCTAssertEqual(result.marks.map(\.entry.trustMark), [s.mark])
        XCTAssertTrue(result.dependsOnRemoteStatus)
        XCTAssertEqual(client.requests, [Self.statusEndpoint])
    }

    func testRemoteRevokedMarkIsDropped() throws {
        let s = try setup()
        try s.issuerHost.revokeTrustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider, reason: "test")
        let result = try verify(s, status: TrustMarkStatusChecker(client: endpoint(s)))
        XCTAssertEqual(result.marks.count, 0)
        XCTAssertTrue(result.dependsOnRemoteStatus, "a dropped mark was decided remotely too")
    }

    func testFailedOrMissingStatusClientDropsTheMark() throws {
        let s = try setup()
        let failing = StubStatusClient { url, _ in throw FederationError.temporarilyUnavailable("timed out fetching \(url)") }
        XCTAssertEqual(try verify(s, status: TrustMarkStatusChecker(client: failing)).marks.count, 0)
        XCTAssertEqual(try verify(s, status: TrustMarkStatusChecker(client: nil)).marks.count, 0)
    }

    func testStatusResponseMustBeSignedByTheIssuerAboutThisMark() throws {
        let s = try setup()
        func answering(_ claims: @escaping @Sendable (String) -> [String: JSONValue], signer: String = F.trustAnchor,
                       typ: String = "trust-mark-status-response+jwt") throws -> StubStatusClient {
            let key = try s.keys.signingKey(for: signer)
            return StubStatusClient { _, jwt in try key.sign(claims(jwt), type: typ) }
        }
        let active: @Sendable (String) -> [String: JSONValue] = { jwt in
            ["iss": .string(F.trustAnchor), "iat": 1_700_000_000, "trust_mark": .string(jwt), "status": "active"]
        }
        XCTAssertEqual(try verify(s, status: TrustMarkStatusChecker(client: answering(active))).marks.count, 1, "the control case")
        XCTAssertEqual(try verify(s, status: TrustMarkStatusChecker(client: answering(active, signer: F.intermediate))).marks.count, 0)
        XCTAssertEqual(try verify(s, status: TrustMarkStatusChecker(client: answering(active, typ: "jwt"))).marks.count, 0)
        XCTAssertEqual(try verify(s, status: TrustMarkStatusChecker(client: answering { jwt in
            var c = active(jwt); c["trust_mark"] = "another"; return c
        })).marks.count, 0)
        XCTAssertEqual(try verify(s, status: TrustMarkStatusChecker(client: answering { jwt in
            var c = active(jwt); c["iss"] = .string(F.intermediate); return c
        })).marks.count, 0)
        XCTAssertEqual(try verify(s, status: TrustMarkStatusChecker(client: answering { jwt in
            var c = active(jwt); c["status"] = "expired"; return c
        })).marks.count, 0)
        XCTAssertEqual(try verify(s, status: TrustMarkStatusChecker(client: StubStatusClient { _, _ in "not a jwt" })).marks.count, 0)
    }

    /// Answers are reused within one second, then asked again, so a revocation shows within ~1 s.
    func testStatusIsCachedForOneSecond() throws {
        let s = try setup()
        let client = endpoint(s)
        let checker = TrustMarkStatusChecker(client: client)
        XCTAssertEqual(try verify(s, status: checker).marks.count, 1)
        try s.issuerHost.revokeTrustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider, reason: "test")
        XCTAssertEqual(try verify(s, status: checker).marks.count, 1, "cache hit within the second")
        XCTAssertEqual(client.requests.count, 1)
        s.clock.advance(1)
        XCTAssertEqual(try verify(s, status: checker).marks.count, 0, "asked again after a second")
        XCTAssertEqual(client.requests.count, 2)
    }

    func testFailuresAreCachedBrieflyToo() throws {
        let s = try setup()
        let failing = StubStatusClient { _, _ in throw FederationError.temporarilyUnavailable("down") }
        let checker = TrustMarkStatusChecker(client: failing)
        _ = try verify(s, status: checker)
        _ = try verify(s, status: checker)
        XCTAssertEqual(failing.requests.count, 1)
    }

    func testCacheIsBounded() throws {
        let s = try setup()
        let client = endpoint(s)
        let checker = TrustMarkStatusChecker(client: client, capacity: 2)
        let keys = try s.keys.publicKeys(for: F.trustAnchor)
        for n in 0..<3 {
            // Distinct endpoints make distinct cache entries; the third clears the full cache.
            XCTAssertNoThrow(try checker.checkActive(s.mark, issuer: F.trustAnchor, endpoint: Self.statusEndpoint + "?\(n)", keys: keys, now: start))
        }
        XCTAssertNoThrow(try checker.checkActive(s.mark, issuer: F.trustAnchor, endpoint: Self.statusEndpoint + "?0", keys: keys, now: start))
        XCTAssertEqual(client.requests.count, 4, "the first entry was evicted")
    }

    /// A remote issuer that publishes no status endpoint cannot be asked; its validly signed
    /// mark stands (section 7.3 does not require a status check).
    func testRemoteIssuerWithoutStatusEndpointIsKeptUnflagged() throws {
        let s = try setup()
        let result = try verify(s, status: TrustMarkStatusChecker(client: nil), statusEndpoint: nil)
        XCTAssertEqual(result.marks.count, 1)
        XCTAssertFalse(result.dependsOnRemoteStatus)
    }

    /// The issuer's status endpoint comes from its own entity configuration in the chain.
    func testIssuerTrustFromChainCarriesTheStatusEndpoint() throws {
        let s = try setup()
        let chain = try s.client.resolveChain(subject: F.trustAnchor, anchors: [F.trustAnchor: .known(try s.keys.publicKeys(for: F.trustAnchor))])
        let trust = TrustMarkIssuerTrust(chain: chain)
        XCTAssertEqual(trust.statusEndpoint, Self.statusEndpoint)
        XCTAssertEqual(trust.trustAnchor, F.trustAnchor)
        XCTAssertEqual(trust.keys, try s.keys.publicKeys(for: F.trustAnchor))
    }

    /// Section 7.3: the issuer must be trusted through the same Trust Anchor as the subject.
    func testIssuerChainToAnotherAnchorIsDropped() throws {
        let s = try setup()
        let keys = try s.keys.publicKeys(for: F.trustAnchor)
        let result = s.client.verifiedTrustMarks(
            [TrustMarkEntry(trustMarkType: F.basicMark, trustMark: s.mark)], subject: F.pidProvider, trustAnchor: s.anchor,
            issuer: { _ throws(FederationError) in TrustMarkIssuerTrust(keys: keys, trustAnchor: "https://other.example/ta") },
            status: TrustMarkStatusChecker(client: nil), now: start)
        XCTAssertEqual(result.marks.count, 0)
    }
}
