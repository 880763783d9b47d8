import Cryptography
import JOSE
import JSON
import Store
import Support
import XCTest
@testable import Federation

/// The resolver on its own (no host, no keys, no database), the host's local-only mode, remote
/// caching and remembered failures, and the short cuts for statements signed here.
final class TrustResolverTests: XCTestCase {
    typealias F = FederationFixture
    let clock = ManualClock(1_800_000_000)

    /// A fetcher that fails, counting attempts.
    final class FailingFetcher: StatementFetcher, @unchecked Sendable {
        let attempts = Locked(0)
        func get(_ url: String) throws(FederationError) -> String {
            attempts.withLock { $0 += 1 }
            throw .temporarilyUnavailable("connection refused")
        }
    }

    func testResolverNeedsNoHostKeysOrDatabase() throws {
        let (_, keys, fetcher) = try F.demo(clock: clock)
        let resolver = TrustResolver(source: RemoteStatementSource(fetcher: fetcher, clock: clock), clock: clock)
        let chain = try resolver.resolve(subject: F.pidProvider, anchors: [F.trustAnchor: .known(try keys.publicKeys(for: F.trustAnchor))])
        XCTAssertEqual(chain.statements.map(\.issuer), [F.pidProvider, F.intermediate, F.trustAnchor, F.trustAnchor])
        XCTAssertEqual(chain.resolvedMetadata["openid_credential_issuer"]?["display"], [["name": "Trustbed PID Provider"]])
        let fetched = fetcher.requests.count
        _ = try resolver.resolve(subject: F.pidProvider, anchors: [F.trustAnchor: .selfPublished])
        XCTAssertEqual(fetcher.requests.count, fetched, "remote statements are cached until their exp")
        clock.advance(86_400)
        XCTAssertNoThrow(try resolver.resolve(subject: F.pidProvider, anchors: [F.trustAnchor: .selfPublished]))
        XCTAssertGreaterThan(fetcher.requests.count, fetched, "expired statements are fetched again")
    }

    /// A chain handed over (a request object's `trust_chain` header) is validated as given, with
    /// the Trust Anchor's configuration fetched from the anchor: a chain ending in a forged
    /// anchor configuration, or at another anchor, or starting elsewhere, is refused.
    func testAGivenChainIsValidatedAgainstTheAnchorsOwnConfiguration() throws {
        let (_, keys, fetcher) = try F.demo(clock: clock)
        let resolver = TrustResolver(source: RemoteStatementSource(fetcher: fetcher, clock: clock), clock: clock)
        let given = try resolver.resolve(subject: F.pidProvider, anchors: [F.trustAnchor: .selfPublished]).compactStatements
        let chain = try resolver.validate(given: given, subject: F.pidProvider, trustAnchor: F.trustAnchor)
        XCTAssertEqual(chain.statements.map(\.issuer), [F.pidProvider, F.intermediate, F.trustAnchor, F.trustAnchor])
        XCTAssertNotNil(chain.resolvedMetadata["openid_credential_issuer"])
        // Without the anchor's own configuration at its end, too.
        XCTAssertNoThrow(try resolver.validate(given: Array(given.dropLast()), subject: F.pidProvider, trustAnchor: F.trustAnchor,
                                               anchorKeys: .known(try keys.publicKeys(for: F.trustAnchor))))

        // A forged anchor configuration (another key) in the chain changes nothing: the fetched one is used,
        // and the subordinate statement signed by the forger's key does not verify with it.
        let forger = try PrivateKey(generatingFor: .ES256)
        let forgedKey = JWK(publicKey: forger.publicKey, algorithm: .ES256).adding(["kid": "forged"])
        let claims = try F.decode(given[2]).claims
        let forgedStatement = try JWS.sign(payload: claims, key: forger, algorithm: .ES256, keyID: "forged", type: "entity-statement+jwt")
        var anchorClaims = try F.decode(given[3]).claims
        anchorClaims["jwks"] = ["keys": [.object(forgedKey.json)]]
        let forgedAnchor = try JWS.sign(payload: anchorClaims, key: forger, algorithm: .ES256, keyID: "forged", type: "entity-statement+jwt")
        XCTAssertThrowsError(try resolver.validate(given: [given[0], given[1], forgedStatement, forgedAnchor], subject: F.pidProvider,
                                                   trustAnchor: F.trustAnchor))
        XCTAssertThrowsError(try resolver.validate(given: given, subject: F.intermediate, trustAnchor: F.trustAnchor)) {
            XCTAssertTrue("\($0)".contains("does not start with"), "\($0)")
        }
        XCTAssertThrowsError(try resolver.validate(given: given, subject: F.pidProvider, trustAnchor: F.intermediate))
        XCTAssertThrowsError(try resolver.validate(given: [given[0]], subject: F.pidProvider, trustAnchor: F.trustAnchor))
        XCTAssertThrowsError(try resolver.validate(given: [], subject: F.pidProvider, trustAnchor: F.trustAnchor))
    }

    func testFailedFetchesAreRememberedForTenSeconds() throws {
        let fetcher = FailingFetcher()
        let resolver = TrustResolver(source: RemoteStatementSource(fetcher: fetcher, clock: clock), clock: clock)
        for _ in 0..<5 { XCTAssertThrowsError(try resolver.resolve(subject: "https://dead.example", anchors: [F.trustAnchor: .selfPublished])) }
        XCTAssertEqual(fetcher.attempts.current, 1, "a dead host costs one attempt")
        clock.advance(10)
        XCTAssertThrowsError(try resolver.resolve(subject: "https://dead.example", anchors: [F.trustAnchor: .selfPublished]))
        XCTAssertEqual(fetcher.attempts.current, 2, "and another after 10 s")
    }

    func testAnExhaustedDeadlineIsTemporarilyUnavailable() throws {
        let (_, _, fetcher) = try F.demo(clock: clock)
        let resolver = TrustResolver(source: RemoteStatementSource(fetcher: fetcher, clock: clock), clock: clock)
        XCTAssertThrowsError(try resolver.resolve(subject: F.pidProvider, anchors: [F.trustAnchor: .selfPublished], deadline: .after(seconds: 0))) {
            XCTAssertEqual(($0 as? FederationError)?.code, "temporarily_unavailable", "\($0)")
        }
        XCTAssertTrue(fetcher.requests.isEmpty)
    }

    func testLocalOnlyResolveAnswersHostedChainsWithoutTheNetwork() throws {
        let (host, _, fetcher) = try F.demo(clock: clock)
        let jwt = try host.localResolveResponse(resolver: F.trustAnchor, subject: F.pidProvider, trustAnchors: [F.trustAnchor], entityTypes: [])
        XCTAssertNotNil(jwt)
        XCTAssertEqual(try F.decode(XCTUnwrap(jwt)).claims["trust_chain"]?.arrayValue?.count, 4)
        XCTAssertTrue(fetcher.requests.isEmpty)
        // Errors that need no network are errors, not "needs network".
        XCTAssertThrowsError(try host.localResolveResponse(resolver: F.trustAnchor, subject: F.pidProvider, trustAnchors: ["https://x.example"], entityTypes: [])) {
            XCTAssertEqual(($0 as? FederationError)?.code, "invalid_trust_anchor")
        }
    }

    func testLocalOnlyResolveSignalsWhenItNeedsTheNetwork() throws {
        let fetcher = RoutingFetcher()
        let keysA = InMemoryKeys(clock: clock), keysB = InMemoryKeys(clock: clock)
        let mid = "https://b.example/intermediate", leaf = "https://b.example/leaf"
        let ta = HostedEntity(name: "ta", entityID: F.trustAnchor, isTrustAnchor: true,
                              subordinates: [mid: SubordinateEntry(entityID: mid, jwks: try keysB.publicKeys(for: mid).jsonValue)])
        let a = FederationHost(entities: [ta], keys: keysA, clock: clock, database: try Database(path: ":memory:"), fetcher: fetcher)
        let b = FederationHost(entities: [
            HostedEntity(name: "intermediate", entityID: mid, authorityHints: [F.trustAnchor]),
            HostedEntity(name: "leaf", entityID: leaf, authorityHints: [mid], metadata: ["openid_relying_party": ["client_name": "x"]]),
        ], keys: keysB, clock: clock, database: try Database(path: ":memory:"), fetcher: fetcher)
        fetcher.register(a)
        fetcher.register(b)

        XCTAssertNil(try a.localResolveResponse(resolver: F.trustAnchor, subject: leaf, trustAnchors: [F.trustAnchor], entityTypes: []))
        XCTAssertTrue(fetcher.requests.isEmpty, "local-only never fetches")
        XCTAssertNotNil(try a.resolveResponse(resolver: F.trustAnchor, subject: leaf, trustAnchors: [F.trustAnchor], entityTypes: []))
        let fetched = fetcher.requests.count
        XCTAssertGreaterThan(fetched, 0)
        // Now everything is cached: a different question about the same chain is answered locally.
        XCTAssertNotNil(try a.localResolveResponse(resolver: F.trustAnchor, subject: leaf, trustAnchors: [F.trustAnchor], entityTypes: ["openid_relying_party"]))
        XCTAssertEqual(fetcher.requests.count, fetched)
    }

    func testStatementsSignedHereSkipVerificationOnlyForTheirOwnKey() throws {
        let (host, keys, _) = try F.demo(clock: clock)
        let signed = try host.signedEntityConfiguration(of: F.trustAnchor, parsed: true)
        let statement = try XCTUnwrap(signed.statement)
        // A broken signature: verification would fail, but a statement signed here is not re-verified...
        let own = try keys.publicKeys(for: F.trustAnchor)
        let signer = try XCTUnwrap(own.key(withID: statement.keyID))
        let parts = signed.compact.split(separator: ".").map(String.init)
        let badSignature = try EntityStatement.decode(parts[0] + "." + parts[1] + "." + String(repeating: "A", count: parts[2].count))
        XCTAssertNoThrow(try SourcedStatement(signedHere: badSignature, signer: signer).verify(with: own))
        XCTAssertThrowsError(try SourcedStatement(badSignature).verify(with: own))
        // ...and only when the keys it is checked against contain its signing key.
        let stranger = JWK(publicKey: try PrivateKey(generatingFor: .ES256).publicKey, algorithm: .ES256)
        XCTAssertThrowsError(try SourcedStatement(signedHere: statement, signer: signer).verify(with: JWKSet(keys: [stranger])))
        let sameKid = try JWK(json: stranger.json.merging(["kid": .string(statement.keyID)]) { $1 })
        XCTAssertThrowsError(try SourcedStatement(signedHere: statement, signer: signer).verify(with: JWKSet(keys: [sameKid])),
                             "a kid alone is not enough: the key material must match")
    }

    func testHostSourceMarksLocalStatementsAsSignedHere() throws {
        let (host, _, _) = try F.demo(clock: clock)
        let source = HostStatementSource(host: host, networkDemand: nil)
        let ta = try source.entityConfiguration(of: F.trustAnchor, deadline: .distant)
        XCTAssertTrue(ta.isTrusted)
        XCTAssertTrue(try source.subordinateStatement(superior: ta, subject: F.intermediate, deadline: .distant).isTrusted)
    }

    func testMergedPoliciesAreReusedAcrossLeaves() throws {
        let leaves = (0..<5).map { i in
            HostedEntity(name: "leaf\(i)", entityID: F.base + "/leaf\(i)", authorityHints: [F.intermediate],
                         metadata: ["openid_credential_issuer": ["credential_issuer": .string(F.base + "/leaf\(i)")]])
        }
        let (host, keys, _) = try F.demo(clock: clock, entities: [F.trustAnchorEntity(), F.intermediateEntity()] + leaves)
        for leaf in leaves {
            let chain = try host.resolveChain(subject: leaf.entityID, anchors: [F.trustAnchor: .known(try keys.publicKeys(for: F.trustAnchor))])
            XCTAssertEqual(chain.resolvedMetadata["openid_credential_issuer"]?["display"], [["name": "Trustbed PID Provider"]])
            XCTAssertEqual(chain.resolvedMetadata["openid_credential_issuer"]?["credential_issuer"], .string(leaf.entityID))
        }
        XCTAssertEqual(host.policyCache.counts.parsed, 1, "one distinct policy, parsed once")
        XCTAssertEqual(host.policyCache.counts.merged, 1, "merged once for every leaf")
    }
}
