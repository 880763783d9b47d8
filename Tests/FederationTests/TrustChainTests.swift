import Support
import Cryptography
import Federation
import JOSE
import JSON
import Store
import XCTest

final class TrustChainTests: XCTestCase {
    typealias F = FederationFixture
    let clock = ManualClock(1_800_000_000)

    private func anchors(_ keys: InMemoryKeys) throws -> [String: TrustAnchorKeys] {
        [F.trustAnchor: .known(try keys.publicKeys(for: F.trustAnchor))]
    }

    func testThreeLevelChainResolvesWithMergedPolicy() throws {
        var ta = F.trustAnchorEntity()
        ta = HostedEntity(name: ta.name, entityID: ta.entityID, isTrustAnchor: true, metadata: ta.metadata,
                          subordinateDefaults: SubordinatePolicy(metadataPolicy: [
                              "openid_credential_issuer": ["display": ["default": [["name": "TA default"]]]],
                              "oauth_authorization_server": ["grant_types_supported": ["default": ["authorization_code"]]],
                          ]))
        let intermediate = HostedEntity(
            name: "intermediate", entityID: F.intermediate, authorityHints: [F.trustAnchor],
            subordinateDefaults: SubordinatePolicy(
                metadataPolicy: ["oauth_authorization_server": ["grant_types_supported": ["subset_of": ["authorization_code", "refresh_token"]]]],
                metadata: ["oauth_authorization_server": ["op_policy_uri": "https://tb.example/policy"]]))
        let (host, keys, _) = try F.demo(clock: clock, entities: [ta, intermediate, F.pidProviderEntity, F.relyingPartyEntity])
        let chain = try host.resolveChain(subject: F.pidProvider, anchors: try anchors(keys))
        XCTAssertEqual(chain.statements.map(\.issuer), [F.pidProvider, F.intermediate, F.trustAnchor, F.trustAnchor])
        XCTAssertEqual(chain.statements.map(\.subject), [F.pidProvider, F.pidProvider, F.intermediate, F.trustAnchor])
        XCTAssertEqual(chain.resolvedMetadata["openid_credential_issuer"]?["display"], [["name": "TA default"]])
        XCTAssertEqual(chain.resolvedMetadata["oauth_authorization_server"]?["grant_types_supported"], ["authorization_code"])
        XCTAssertEqual(chain.resolvedMetadata["oauth_authorization_server"]?["op_policy_uri"], "https://tb.example/policy",
                       "the immediate superior's metadata is applied before the policy")
        XCTAssertEqual(chain.expiresAt, chain.statements.map(\.expiresAt).min())
    }

    func testShortestChainIsPreferred() throws {
        let rp = HostedEntity(name: "relying-party", entityID: F.relyingParty, authorityHints: [F.intermediate, F.trustAnchor],
                              metadata: ["openid_credential_verifier": ["client_name": "RP"]])
        let (host, keys, _) = try F.demo(clock: clock, entities: [F.trustAnchorEntity(), F.intermediateEntity(), F.pidProviderEntity, rp])
        let chain = try host.resolveChain(subject: F.relyingParty, anchors: try anchors(keys))
        XCTAssertEqual(chain.statements.count, 3)
    }

    func testTrustAnchorItselfResolvesToAChainOfOne() throws {
        let (host, keys, _) = try F.demo(clock: clock)
        XCTAssertEqual(try host.resolveChain(subject: F.trustAnchor, anchors: try anchors(keys)).statements.count, 1)
    }

    func testWrongTrustAnchorKeysAreRefused() throws {
        let (host, _, _) = try F.demo(clock: clock)
        let stranger = JWK(publicKey: try PrivateKey(generatingFor: .ES256).publicKey, algorithm: .ES256)
        XCTAssertThrowsError(try host.resolveChain(subject: F.pidProvider, anchors: [F.trustAnchor: .known(JWKSet(keys: [stranger]))])) {
            guard case .invalidTrustChain(let m) = $0 as? FederationError else { return XCTFail("\($0)") }
            XCTAssertTrue(m.contains("trust anchor"), m)
        }
    }

    func testMaxPathLengthIsEnforced() throws {
        let ta = HostedEntity(name: "ta", entityID: F.trustAnchor, isTrustAnchor: true,
                              subordinateDefaults: SubordinatePolicy(constraints: ["max_path_length": 0]))
        let (host, keys, _) = try F.demo(clock: clock, entities: [ta, F.intermediateEntity(), F.pidProviderEntity, F.relyingPartyEntity])
        XCTAssertThrowsError(try host.resolveChain(subject: F.pidProvider, anchors: try anchors(keys)))
        XCTAssertNoThrow(try host.resolveChain(subject: F.relyingParty, anchors: try anchors(keys)), "a direct subordinate has path length 0")
    }

    func testNamingConstraintsAndAllowedEntityTypes() throws {
        let ta = HostedEntity(name: "ta", entityID: F.trustAnchor, isTrustAnchor: true,
                              subordinateDefaults: SubordinatePolicy(constraints: [
                                  "naming_constraints": ["excluded": ["other.example"]],
                                  "allowed_entity_types": ["openid_credential_issuer"],
                              ]))
        let (host, keys, _) = try F.demo(clock: clock, entities: [ta, F.intermediateEntity(), F.pidProviderEntity, F.relyingPartyEntity])
        let chain = try host.resolveChain(subject: F.pidProvider, anchors: try anchors(keys))
        XCTAssertNotNil(chain.resolvedMetadata["openid_credential_issuer"])
        XCTAssertNil(chain.resolvedMetadata["oauth_authorization_server"], "entity types the anchor does not allow are removed")

        let strict = HostedEntity(name: "ta", entityID: F.trustAnchor, isTrustAnchor: true,
                                  subordinateDefaults: SubordinatePolicy(constraints: ["naming_constraints": ["permitted": ["other.example"]]]))
        let (host2, keys2, _) = try F.demo(clock: clock, entities: [strict, F.intermediateEntity(), F.pidProviderEntity, F.relyingPartyEntity])
        XCTAssertThrowsError(try host2.resolveChain(subject: F.pidProvider, anchors: try anchors(keys2)))
    }

    func testPolicyConflictIsAnInvalidMetadataErrorNotHalfAppliedMetadata() throws {
        let ta = HostedEntity(name: "ta", entityID: F.trustAnchor, isTrustAnchor: true,
                              subordinateDefaults: SubordinatePolicy(metadataPolicy: ["openid_credential_issuer": ["credential_endpoint": ["value": "https://a.example"]]]))
        let intermediate = HostedEntity(name: "intermediate", entityID: F.intermediate, authorityHints: [F.trustAnchor],
                                        subordinateDefaults: SubordinatePolicy(metadataPolicy: ["openid_credential_issuer": ["credential_endpoint": ["value": "https://b.example"]]]))
        let (host, keys, _) = try F.demo(clock: clock, entities: [ta, intermediate, F.pidProviderEntity])
        XCTAssertThrowsError(try host.resolveChain(subject: F.pidProvider, anchors: try anchors(keys))) {
            guard case .invalidMetadata = $0 as? FederationError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try host.resolveResponse(resolver: F.trustAnchor, subject: F.pidProvider, trustAnchors: [F.trustAnchor], entityTypes: [])) {
            XCTAssertEqual(($0 as? FederationError)?.code, "invalid_metadata")
        }
    }

    func testUnknownTrustAnchorAndSubject() throws {
        let (host, _, _) = try F.demo(clock: clock)
        XCTAssertThrowsError(try host.resolveResponse(resolver: F.trustAnchor, subject: F.pidProvider, trustAnchors: ["https://nobody.example"], entityTypes: [])) {
            XCTAssertEqual(($0 as? FederationError)?.code, "invalid_trust_anchor")
            XCTAssertEqual(($0 as? FederationError)?.status, 404)
        }
        XCTAssertThrowsError(try host.resolveResponse(resolver: F.trustAnchor, subject: "https://tb.example/ghost", trustAnchors: [F.trustAnchor], entityTypes: [])) {
            XCTAssertEqual(($0 as? FederationError)?.code, "invalid_subject")
        }
    }

    func testResolveResponseClaims() throws {
        let (host, keys, _) = try F.demo(clock: clock)
        let jwt = try host.resolveResponse(resolver: F.trustAnchor, subject: F.pidProvider, trustAnchors: [F.trustAnchor],
                                           entityTypes: ["openid_credential_issuer"])
        let (jws, claims) = try F.decode(jwt)
        XCTAssertEqual(jws.type, "resolve-response+jwt")
        try jws.verify(keys: keys.publicKeys(for: F.trustAnchor), allowList: [.ES256], expectedType: "resolve-response+jwt")
        XCTAssertEqual(claims["iss"], .string(F.trustAnchor))
        XCTAssertEqual(claims["sub"], .string(F.pidProvider))
        XCTAssertEqual(claims["metadata"]?.objectValue.map { Set($0.keys) }, ["openid_credential_issuer"])
        XCTAssertEqual(claims["trust_chain"]?.arrayValue?.count, 4)
        XCTAssertEqual(claims["trust_marks"]?.arrayValue?.count, 1)
        let chainExp = try claims["trust_chain"]!.stringArray!.map { try F.decode($0).claims["exp"]!.intValue! }.min()!
        XCTAssertLessThanOrEqual(claims["exp"]!.intValue!, chainExp)
        XCTAssertEqual(try host.resolveResponse(resolver: F.trustAnchor, subject: F.pidProvider, trustAnchors: [F.trustAnchor],
                                                entityTypes: ["openid_credential_issuer"]), jwt, "a warm resolve is served from the cache")
    }

    // MARK: - Federations that span servers

    /// Server A hosts only the trust anchor; server B hosts the intermediate (under A's anchor) and a leaf.
    private func twoServers() throws -> (a: FederationHost, b: FederationHost, keysB: InMemoryKeys, fetcher: RoutingFetcher) {
        let fetcher = RoutingFetcher()
        let keysA = InMemoryKeys(clock: clock)
        let keysB = InMemoryKeys(clock: clock)
        let remoteIntermediate = "https://b.example/intermediate"
        let leafID = "https://b.example/leaf"
        let ta = HostedEntity(name: "ta", entityID: F.trustAnchor, isTrustAnchor: true,
                              subordinates: [remoteIntermediate: SubordinateEntry(entityID: remoteIntermediate,
                                                                                  jwks: try keysB.publicKeys(for: remoteIntermediate).jsonValue,
                                                                                  entityTypes: ["federation_entity"])])
        let a = FederationHost(entities: [ta], keys: keysA, clock: clock, database: try Database(path: ":memory:"), fetcher: fetcher)
        let b = FederationHost(entities: [
            HostedEntity(name: "intermediate", entityID: remoteIntermediate, authorityHints: [F.trustAnchor]),
            HostedEntity(name: "leaf", entityID: leafID, authorityHints: [remoteIntermediate],
                         metadata: ["openid_credential_issuer": ["credential_issuer": .string(leafID)]]),
        ], keys: keysB, clock: clock, database: try Database(path: ":memory:"), fetcher: fetcher)
        fetcher.register(a)
        fetcher.register(b)
        return (a, b, keysB, fetcher)
    }

    func testChainAcrossTwoServersResolvesAtTheAnchor() throws {
        let (a, b, _, _) = try twoServers()
        let jwt = try a.resolveResponse(resolver: F.trustAnchor, subject: "https://b.example/leaf", trustAnchors: [F.trustAnchor], entityTypes: [])
        XCTAssertEqual(try F.decode(jwt).claims["trust_chain"]?.arrayValue?.count, 4)
        // And at the intermediate on the other server, which trusts the remote anchor its hints lead to.
        let fromB = try b.resolveResponse(resolver: "https://b.example/intermediate", subject: "https://b.example/leaf",
                                          trustAnchors: [F.trustAnchor], entityTypes: [])
        XCTAssertEqual(try F.decode(fromB).claims["trust_chain"]?.arrayValue?.count, 4)
    }

    func testTamperedRemoteStatementBreaksTheChain() throws {
        let (a, b, _, fetcher) = try twoServers()
        let url = "https://b.example/intermediate/fetch?sub=https%3A%2F%2Fb.example%2Fleaf"
        let genuine = try b.subordinateStatement(issuer: "https://b.example/intermediate", subject: "https://b.example/leaf")
        fetcher.override(url: url, body: try F.tampered(genuine) { $0["metadata"] = ["openid_credential_issuer": ["credential_issuer": "https://evil.example"]] })
        XCTAssertThrowsError(try a.resolveChain(subject: "https://b.example/leaf", anchors: [F.trustAnchor: .known(try a.keys.publicKeys(for: F.trustAnchor))])) {
            XCTAssertEqual(($0 as? FederationError)?.code, "invalid_trust_chain", "\($0)")
        }
        XCTAssertTrue(fetcher.requests.contains(url))
    }

    func testExpiredRemoteStatementBreaksTheChain() throws {
        let (a, b, keysB, fetcher) = try twoServers()
        let now = clock.now()
        let expired = try keysB.signingKey(for: "https://b.example/intermediate").sign([
            "iss": "https://b.example/intermediate", "sub": "https://b.example/leaf",
            "iat": .int(now - 7200), "exp": .int(now - 3600),
            "jwks": try keysB.publicKeys(for: "https://b.example/leaf").jsonValue,
        ], type: "entity-statement+jwt")
        _ = b
        fetcher.override(url: "https://b.example/intermediate/fetch?sub=https%3A%2F%2Fb.example%2Fleaf", body: expired)
        XCTAssertThrowsError(try a.resolveChain(subject: "https://b.example/leaf", anchors: [F.trustAnchor: .known(try a.keys.publicKeys(for: F.trustAnchor))])) {
            guard case .invalidTrustChain(let m) = $0 as? FederationError else { return XCTFail("\($0)") }
            XCTAssertTrue(m.contains("expired"), m)
        }
    }

    func testAuthorityHintLoopTerminatesWithAnError() throws {
        let fetcher = RoutingFetcher()
        let keys = InMemoryKeys(clock: clock)
        let x = "https://loop.example/x", y = "https://loop.example/y"
        // Two remote entities that name each other as superiors, each with a fetch endpoint.
        for (me, other) in [(x, y), (y, x)] {
            let ec = try keys.signingKey(for: me).sign([
                "iss": .string(me), "sub": .string(me), "iat": .int(clock.now()), "exp": .int(clock.now() + 3600),
                "jwks": try keys.publicKeys(for: me).jsonValue, "authority_hints": [.string(other)],
                "metadata": ["federation_entity": ["federation_fetch_endpoint": .string(me + "/fetch")]],
            ], type: "entity-statement+jwt")
            fetcher.override(url: me + "/.well-known/openid-federation", body: ec)
            let ss = try keys.signingKey(for: me).sign([
                "iss": .string(me), "sub": .string(other), "iat": .int(clock.now()), "exp": .int(clock.now() + 3600),
                "jwks": try keys.publicKeys(for: other).jsonValue,
            ], type: "entity-statement+jwt")
            fetcher.override(url: me + "/fetch?sub=" + other.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, body: ss)
        }
        let (host, taKeys, _) = try F.demo(clock: clock)
        let client = FederationHost(entities: [], keys: taKeys, clock: clock, database: try Database(path: ":memory:"), fetcher: fetcher)
        _ = host
        XCTAssertThrowsError(try client.resolveChain(subject: x, anchors: [F.trustAnchor: .known(try taKeys.publicKeys(for: F.trustAnchor))])) {
            guard case .invalidTrustChain(let m) = $0 as? FederationError else { return XCTFail("\($0)") }
            XCTAssertTrue(m.contains("loop"), m)
        }
        XCTAssertLessThan(fetcher.requests.count, 20, "loop detection stops fetching")
    }
}
