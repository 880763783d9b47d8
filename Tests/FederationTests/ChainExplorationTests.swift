import Support
import Federation
import JOSE
import JSON
import XCTest

/// `FederationHost.exploreChains`: every chain the resolver builds to one anchor, the one
/// `resolve` returns marked, and each verdict where it happens.
final class ChainExplorationTests: XCTestCase {
    typealias F = FederationFixture
    let clock = ManualClock(1_800_000_000)

    func testEveryChainIsListedAndTheChosenOneIsResolves() throws {
        let rp = HostedEntity(name: "relying-party", entityID: F.relyingParty, authorityHints: [F.intermediate, F.trustAnchor],
                              metadata: ["openid_credential_verifier": ["client_name": "RP"]])
        let (host, keys, _) = try F.demo(clock: clock, entities: [F.trustAnchorEntity(), F.intermediateEntity(), F.pidProviderEntity, rp])
        let e = try host.exploreChains(subject: F.relyingParty, trustAnchor: F.trustAnchor)
        XCTAssertEqual(e.candidates.count, 2)
        XCTAssertTrue(e.anchorKnown)
        let chosen = try XCTUnwrap(e.chosen)
        let resolved = try host.resolveChain(subject: F.relyingParty, anchors: [F.trustAnchor: .known(try keys.publicKeys(for: F.trustAnchor))])
        XCTAssertEqual(e.candidates[chosen].chain?.compactStatements, resolved.compactStatements)
        XCTAssertEqual(e.candidates[chosen].statements.count, 3)
        for c in e.candidates {
            XCTAssertNotNil(c.chain)
            XCTAssertTrue(c.statements.allSatisfy { $0.signature.passed && $0.time.passed })
            XCTAssertEqual(c.policy?.resolved.map(JSONValue.object), c.chain.map { .object($0.resolvedMetadata) })
        }
        XCTAssertEqual(e.candidates[chosen].statements[0].endpoint, F.relyingParty + "/.well-known/openid-federation")
        XCTAssertEqual(e.candidates[chosen].statements[1].endpoint?.hasPrefix(F.trustAnchor + "/fetch?sub="), true)
    }

    func testMaxPathLengthCutIsShownAtItsLevel() throws {
        let ta = HostedEntity(name: "ta", entityID: F.trustAnchor, isTrustAnchor: true,
                              subordinateDefaults: SubordinatePolicy(constraints: ["max_path_length": 0]))
        let (host, _, _) = try F.demo(clock: clock, entities: [ta, F.intermediateEntity(), F.pidProviderEntity, F.relyingPartyEntity])
        let e = try host.exploreChains(subject: F.pidProvider, trustAnchor: F.trustAnchor)
        XCTAssertNil(e.chosen)
        let c = try XCTUnwrap(e.candidates.first)
        XCTAssertEqual(c.error?.code, "invalid_trust_chain")
        XCTAssertNil(c.policy)
        let level = try XCTUnwrap(c.constraints.last)
        XCTAssertEqual(level.issuer, F.trustAnchor)
        XCTAssertEqual(level.checks.first?.name, "max_path_length")
        XCTAssertEqual(level.checks.first?.section, "6.2.1")
        XCTAssertEqual(level.checks.first?.passed, false)
    }

    func testPolicyConflictIsPlacedAtTheIntermediate() throws {
        let ta = HostedEntity(name: "ta", entityID: F.trustAnchor, isTrustAnchor: true,
                              subordinateDefaults: SubordinatePolicy(metadataPolicy: ["openid_credential_issuer": ["credential_endpoint": ["value": "https://a.example"]]]))
        let intermediate = HostedEntity(name: "intermediate", entityID: F.intermediate, authorityHints: [F.trustAnchor],
                                        subordinateDefaults: SubordinatePolicy(metadataPolicy: ["openid_credential_issuer": ["credential_endpoint": ["value": "https://b.example"]]]))
        let (host, _, _) = try F.demo(clock: clock, entities: [ta, intermediate, F.pidProviderEntity])
        let e = try host.exploreChains(subject: F.pidProvider, trustAnchor: F.trustAnchor)
        XCTAssertNil(e.chosen)
        let c = try XCTUnwrap(e.candidates.first)
        XCTAssertEqual(c.error?.code, "invalid_metadata")
        let failure = try XCTUnwrap(c.policy?.failure)
        XCTAssertEqual(failure.stage, .merge)
        XCTAssertEqual(failure.levelEntityID, F.intermediate)
        XCTAssertEqual(failure.parameter, "credential_endpoint")
        XCTAssertEqual(failure.section, "6.1.4.1, 6.1.3.1.1")
    }

    func testAHostedEntityThatIsNoAnchorIsRefused() throws {
        let (host, _, _) = try F.demo(clock: clock)
        XCTAssertThrowsError(try host.exploreChains(subject: F.pidProvider, trustAnchor: F.intermediate)) {
            XCTAssertEqual(($0 as? FederationError)?.code, "invalid_trust_anchor")
        }
        XCTAssertThrowsError(try host.exploreChains(subject: F.base + "/nobody", trustAnchor: F.trustAnchor)) {
            XCTAssertEqual(($0 as? FederationError)?.code, "invalid_subject")
        }
    }

    func testTrustMarksCarryTheirVerdict() throws {
        let (host, _, _) = try F.demo(clock: clock)
        let e = try host.exploreChains(subject: F.pidProvider, trustAnchor: F.trustAnchor)
        XCTAssertEqual(e.trustMarks.map(\.included), [true], "\(e.trustMarks.map(\.reason))")
    }
}
