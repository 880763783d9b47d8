@testable import Federation
import JOSE
import Store
import Support
import XCTest

/// Nothing under the server's own origin is fetched over HTTP (a worker waiting on its own
/// server deadlocks once every worker does): hosted documents come from the host, anything else
/// under the origin fails at once as the server's `not_found`.
final class OwnOriginFetchTests: XCTestCase {
    typealias F = FederationFixture
    let clock = ManualClock(1_700_000_000)

    private func host(baseURL: String?, entities: [HostedEntity]? = nil) throws -> (FederationHost, RoutingFetcher, InMemoryKeys) {
        let keys = InMemoryKeys(clock: clock)
        let fetcher = RoutingFetcher()
        let host = FederationHost(entities: entities ?? F.entities(), keys: keys, clock: clock, database: try Database(path: ":memory:"),
                                  fetcher: fetcher, baseURL: baseURL)
        fetcher.register(host)
        return (host, fetcher, keys)
    }

    func testAnUnhostedEntityUnderTheOwnOriginFailsWithoutAFetch() throws {
        let (host, fetcher, _) = try host(baseURL: F.base)
        let missing = F.base + "/not-hosted"
        let started = Date()
        // Local-only: answered (an error), not handed to the network pool.
        XCTAssertThrowsError(try host.localResolveResponse(resolver: F.trustAnchor, subject: missing, trustAnchors: [F.trustAnchor], entityTypes: []))
        XCTAssertThrowsError(try host.resolveResponse(resolver: F.trustAnchor, subject: missing, trustAnchors: [F.trustAnchor], entityTypes: []))
        XCTAssertEqual(fetcher.requests, [], "nothing under the own origin goes over HTTP")
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
    }

    func testWithoutAKnownOriginTheSameURLIsFetched() throws {
        // The contrast: a host that does not know its origin sends the request out.
        let (host, fetcher, _) = try host(baseURL: nil)
        XCTAssertThrowsError(try host.resolveResponse(resolver: F.trustAnchor, subject: F.base + "/not-hosted",
                                                      trustAnchors: [F.trustAnchor], entityTypes: []))
        XCTAssertEqual(fetcher.requests, [F.base + "/not-hosted/.well-known/openid-federation"])
    }

    func testAHintToAnUnhostedOwnEntityIsSkippedAndTheChainStillResolves() throws {
        let leaf = HostedEntity(name: "leaf", entityID: F.base + "/leaf", authorityHints: [F.base + "/gone", F.trustAnchor],
                                metadata: ["openid_relying_party": ["client_name": "x"]])
        var entities = F.entities()
        entities.append(leaf)
        let (host, fetcher, _) = try host(baseURL: F.base, entities: entities)
        XCTAssertNotNil(try host.localResolveResponse(resolver: F.trustAnchor, subject: leaf.entityID, trustAnchors: [F.trustAnchor], entityTypes: []))
        XCTAssertEqual(fetcher.requests, [])
    }

    func testOwnStatementsAreServedInProcess() throws {
        let (host, _, _) = try host(baseURL: F.base)
        XCTAssertEqual(try host.ownStatement(at: F.intermediate + "/.well-known/openid-federation").statement.subject, F.intermediate)
        let fetched = try host.ownStatement(at: F.trustAnchor + "/fetch?sub=" + F.intermediate.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
        XCTAssertEqual(fetched.statement.issuer, F.trustAnchor)
        XCTAssertEqual(fetched.statement.subject, F.intermediate)
        for url in [F.base + "/nobody/.well-known/openid-federation", F.trustAnchor + "/fetch?sub=https%3A%2F%2Fx.example",
                    F.base + "/anything", F.relyingParty + "/fetch?sub=" + F.intermediate] {
            XCTAssertThrowsError(try host.ownStatement(at: url), url) { XCTAssertEqual(($0 as? FederationError)?.code, "not_found", url) }
        }
        XCTAssertTrue(host.isOwnOrigin("HTTPS://TB.EXAMPLE:443/x"))
        XCTAssertFalse(host.isOwnOrigin("https://tb.example:8443/x"))
        XCTAssertFalse(host.isOwnOrigin("http://tb.example/x"))
    }

    /// A remote issuer's mark whose status endpoint is under this server's origin, where nothing
    /// answers it: the mark is dropped, and the remote status client is never asked.
    func testATrustMarkStatusEndpointUnderTheOwnOriginIsAnsweredInProcess() throws {
        let (issuerHost, _, keys) = try host(baseURL: nil)
        let mark = try issuerHost.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        let anchor = try EntityStatement.decode(issuerHost.entityConfiguration(of: F.trustAnchor))
        let client = FederationHost(entities: [], keys: keys, clock: clock, database: try Database(path: ":memory:"),
                                    fetcher: RoutingFetcher(), baseURL: F.base)
        let remote = StubStatusClient { _, jwt in try issuerHost.trustMarkStatus(issuer: F.trustAnchor, trustMark: jwt) }
        let publicKeys = try keys.publicKeys(for: F.trustAnchor)
        func verify(endpoint: String) -> TrustMarkVerification {
            client.verifiedTrustMarks([TrustMarkEntry(trustMarkType: F.basicMark, trustMark: mark)], subject: F.pidProvider, trustAnchor: anchor,
                                      issuer: { _ throws(FederationError) in
                                          TrustMarkIssuerTrust(keys: publicKeys, statusEndpoint: endpoint, trustAnchor: F.trustAnchor)
                                      },
                                      status: TrustMarkStatusChecker(client: remote), now: clock.now())
        }
        XCTAssertEqual(verify(endpoint: F.trustAnchor + "/trust-mark-status").marks.count, 0)
        XCTAssertEqual(remote.requests, [], "the own origin is never asked over the network")
        // Another origin still goes to the status client.
        XCTAssertEqual(verify(endpoint: "https://issuer.example/trust-mark-status").marks.count, 1)
        XCTAssertEqual(remote.requests, ["https://issuer.example/trust-mark-status"])
    }

    func testTheOwnStatusClientAnswersForAHostedIssuer() throws {
        let (host, _, _) = try host(baseURL: F.base)
        let mark = try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        let answer = try OwnOriginStatusClient(host: host).post(F.trustAnchor + "/trust-mark-status", form: [(name: "trust_mark", value: mark)])
        XCTAssertEqual(try F.decode(answer).claims["status"]?.stringValue, "active")
        XCTAssertThrowsError(try OwnOriginStatusClient(host: host).post(F.intermediate + "/trust-mark-status", form: [(name: "trust_mark", value: mark)])) {
            XCTAssertEqual(($0 as? FederationError)?.code, "not_found")
        }
    }
}
