@testable import Federation
import Support
import JOSE
import JSON
import Store
import XCTest

/// Trust marks as the resolver and a remote client see them, through the fixture's routing fetcher.
final class TrustMarkResolveTests: XCTestCase {
    typealias F = FederationFixture
    let start: Int64 = 1_700_000_000

    func testResolveResponseCarriesTheVerifiedMark() throws {
        let (host, _, _) = try F.demo(clock: ManualClock(start))
        let mark = try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        let claims = try F.decode(host.resolveResponse(resolver: F.trustAnchor, subject: F.pidProvider,
                                                       trustAnchors: [F.trustAnchor], entityTypes: [])).claims
        XCTAssertEqual(claims["trust_marks"], [TrustMarkEntry(trustMarkType: F.basicMark, trustMark: mark).jsonValue])
        XCTAssertLessThanOrEqual(try XCTUnwrap(claims["exp"]?.intValue), start + 86_400)
        XCTAssertNotNil(claims["metadata"]?["openid_credential_issuer"]?["display"], "the anchor's policy reached the leaf")
    }

    /// A client that hosts nothing resolves the demo federation over the fetcher and keeps the mark.
    func testRemoteClientVerifiesTheMark() throws {
        let clock = ManualClock(start)
        let (host, keys, fetcher) = try F.demo(clock: clock)
        let anchors: [String: TrustAnchorKeys] = [F.trustAnchor: .known(try keys.publicKeys(for: F.trustAnchor))]
        let client = FederationHost(entities: [], keys: keys, clock: clock, database: try Database(path: ":memory:"), fetcher: fetcher)

        let chain = try client.resolveChain(subject: F.pidProvider, anchors: anchors)
        XCTAssertEqual(chain.statements.map(\.issuer), [F.pidProvider, F.intermediate, F.trustAnchor, F.trustAnchor])
        let marks = client.verifiedTrustMarks(chain.subject.trustMarks, subject: F.pidProvider, trustAnchor: chain.trustAnchor,
                                              issuer: { id throws(FederationError) in TrustMarkIssuerTrust(chain: try client.resolveChain(subject: id, anchors: anchors)) },
                                              status: TrustMarkStatusChecker(client: StubStatusClient { _, jwt in try host.trustMarkStatus(issuer: F.trustAnchor, trustMark: jwt) }),
                                              now: clock.now()).marks
        XCTAssertEqual(marks.map(\.entry.trustMarkType), [F.basicMark])
        XCTAssertTrue(fetcher.requests.contains(F.intermediate + "/fetch?sub=" + "https%3A%2F%2Ftb.example%2Fpid-provider"))
    }

    /// A configuration served with a changed mark fails its own signature, so nothing of it is trusted.
    func testTamperedConfigurationIsRefused() throws {
        let clock = ManualClock(start)
        let (host, keys, fetcher) = try F.demo(clock: clock)
        let url = F.pidProvider + "/.well-known/openid-federation"
        fetcher.override(url: url, body: try F.tampered(host.entityConfiguration(of: F.pidProvider)) { $0["trust_marks"] = [] })
        let client = FederationHost(entities: [], keys: keys, clock: clock, database: try Database(path: ":memory:"), fetcher: fetcher)
        XCTAssertThrowsError(try client.resolveChain(subject: F.pidProvider, anchors: [F.trustAnchor: .known(try keys.publicKeys(for: F.trustAnchor))]))
    }
}
