import Support
import Federation
import HTTP
import JOSE
import JSON
import XCTest

final class FederationEndpointTests: XCTestCase {
    typealias F = FederationFixture
    let clock = ManualClock(1_800_000_000)

    private func get(_ host: FederationHost, _ entity: String, _ path: String, _ query: String? = nil) -> HTTPResponse? {
        host.handle(entityID: entity, path: path, request: HTTPRequest(method: "GET", path: path, rawQuery: query))
    }

    private func error(_ r: HTTPResponse?) -> (Int, String?) {
        guard let r else { return (0, nil) }
        return (r.status.code, (try? JSONValue.parse(r.body))?["error"]?.stringValue)
    }

    func testEntityConfigurationClaims() throws {
        let (host, keys, _) = try F.demo(clock: clock)
        let r = try XCTUnwrap(get(host, F.intermediate, "/.well-known/openid-federation"))
        XCTAssertEqual(r.headers.first { $0.name.lowercased() == "content-type" }?.value, "application/entity-statement+jwt")
        let (jws, claims) = try F.decode(String(decoding: r.body, as: UTF8.self))
        XCTAssertEqual(jws.type, "entity-statement+jwt")
        XCTAssertEqual(jws.keyID, try keys.signingKey(for: F.intermediate).kid)
        try jws.verify(keys: JWKSet(json: claims["jwks"]!), allowList: [.ES256], expectedType: "entity-statement+jwt")
        XCTAssertEqual(claims["iss"], .string(F.intermediate))
        XCTAssertEqual(claims["sub"], .string(F.intermediate))
        XCTAssertEqual(claims["authority_hints"], [.string(F.trustAnchor)])
        XCTAssertEqual(claims["exp"]!.intValue! - claims["iat"]!.intValue!, 86_400)
        let fed = claims["metadata"]?["federation_entity"]
        XCTAssertEqual(fed?["federation_fetch_endpoint"], .string(F.intermediate + "/fetch"))
        XCTAssertEqual(fed?["federation_resolve_endpoint"], .string(F.intermediate + "/resolve"))
        let ta = try F.decode(host.entityConfiguration(of: F.trustAnchor)).claims
        XCTAssertNil(ta["authority_hints"])
        XCTAssertNotNil(ta["trust_mark_issuers"])
        let leaf = try F.decode(host.entityConfiguration(of: F.pidProvider)).claims
        XCTAssertNil(leaf["metadata"]?["federation_entity"]?["federation_fetch_endpoint"], "a leaf has no fetch endpoint")
        XCTAssertNil(get(host, F.pidProvider, "/fetch", "sub=x"))
    }

    func testEntityConfigurationIsCachedUntilNearExpiry() throws {
        let (host, _, _) = try F.demo(clock: clock)
        let first = try host.entityConfiguration(of: F.trustAnchor)
        clock.advance(60)
        XCTAssertEqual(try host.entityConfiguration(of: F.trustAnchor), first)
        clock.advance(86_400 * 9 / 10)
        XCTAssertNotEqual(try host.entityConfiguration(of: F.trustAnchor), first)
    }

    func testFetch() throws {
        let (host, keys, _) = try F.demo(clock: clock)
        let r = try XCTUnwrap(get(host, F.trustAnchor, "/fetch", "sub=" + F.intermediate))
        XCTAssertEqual(r.status, 200)
        let (jws, claims) = try F.decode(String(decoding: r.body, as: UTF8.self))
        try jws.verify(keys: keys.publicKeys(for: F.trustAnchor), allowList: [.ES256], expectedType: "entity-statement+jwt")
        XCTAssertEqual(claims["iss"], .string(F.trustAnchor))
        XCTAssertEqual(claims["sub"], .string(F.intermediate))
        XCTAssertEqual(claims["jwks"], try keys.publicKeys(for: F.intermediate).jsonValue)
        XCTAssertEqual(claims["metadata_policy"], F.credentialIssuerPolicy)
        XCTAssertEqual(claims["source_endpoint"], .string(F.trustAnchor + "/fetch"))

        XCTAssertEqual(error(get(host, F.trustAnchor, "/fetch", "sub=https://tb.example/ghost")).0, 404)
        XCTAssertEqual(error(get(host, F.trustAnchor, "/fetch", "sub=https://tb.example/ghost")).1, "not_found")
        XCTAssertEqual(error(get(host, F.trustAnchor, "/fetch")).1, "invalid_request")
        XCTAssertEqual(error(get(host, F.trustAnchor, "/fetch", "sub=\(F.trustAnchor)")).1, "invalid_request")
        XCTAssertEqual(error(get(host, F.trustAnchor, "/fetch", "sub=\(F.intermediate)&sub=\(F.relyingParty)")).1, "invalid_request")
    }

    func testListFilters() throws {
        let (host, _, _) = try F.demo(clock: clock)
        func list(_ q: String?) throws -> [String]? { get(host, F.trustAnchor, "/list", q).flatMap { try? JSONValue.parse($0.body).stringArray } }
        XCTAssertEqual(try list(nil), [F.intermediate, F.relyingParty])
        XCTAssertEqual(try list("intermediate=true"), [F.intermediate])
        XCTAssertEqual(try list("entity_type=openid_credential_verifier"), [F.relyingParty])
        XCTAssertEqual(try list("entity_type=openid_credential_verifier&entity_type=federation_entity"), [F.intermediate, F.relyingParty])
        XCTAssertEqual(try list("trust_marked=true"), [])
        XCTAssertEqual(get(host, F.intermediate, "/list", "trust_mark_type=" + F.basicMark).flatMap { try? JSONValue.parse($0.body).stringArray }, [F.pidProvider])
        // Section 8: parameters an endpoint does not know are ignored, also by list.
        XCTAssertEqual(try list("colour=red"), [F.intermediate, F.relyingParty])
        XCTAssertEqual(error(get(host, F.trustAnchor, "/list", "intermediate=yes")).1, "invalid_request")
    }

    func testResolveEndpointErrors() throws {
        let (host, _, _) = try F.demo(clock: clock)
        XCTAssertEqual(error(get(host, F.trustAnchor, "/resolve", "sub=\(F.pidProvider)")).1, "invalid_request")
        XCTAssertEqual(error(get(host, F.trustAnchor, "/resolve", "trust_anchor=\(F.trustAnchor)")).1, "invalid_request")
        let unknown = error(get(host, F.trustAnchor, "/resolve", "sub=\(F.pidProvider)&trust_anchor=https://x.example"))
        XCTAssertEqual(unknown.0, 404)
        XCTAssertEqual(unknown.1, "invalid_trust_anchor")
        let ok = try XCTUnwrap(get(host, F.trustAnchor, "/resolve", "sub=\(F.pidProvider)&trust_anchor=https://x.example&trust_anchor=\(F.trustAnchor)"))
        XCTAssertEqual(ok.status, 200, "one known anchor among several is enough")
        XCTAssertEqual(ok.headers.first { $0.name.lowercased() == "content-type" }?.value, "application/resolve-response+jwt")
    }
}
