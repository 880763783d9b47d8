@testable import Federation
import Support
import JOSE
import JSON
import Store
import XCTest

/// Section 3.2 (Entity Statement Validation): statements that must not decode, each refused with
/// an `invalid_trust_chain` error naming the claim.
final class EntityStatementRejectionTests: XCTestCase {
    typealias F = FederationFixture
    let start: Int64 = 1_700_000_000
    private var keys: InMemoryKeys!

    override func setUp() {
        keys = InMemoryKeys(clock: ManualClock(start))
    }

    private func jwks(_ id: String) throws -> JSONValue { try keys.publicKeys(for: id).jsonValue }

    /// A valid Entity Configuration of the intermediate, changed by `change`.
    private func configuration(_ change: (inout [String: JSONValue]) -> Void = { _ in }) throws -> String {
        var claims: [String: JSONValue] = [
            "iss": .string(F.intermediate), "sub": .string(F.intermediate), "iat": .int(start), "exp": .int(start + 600),
            "jwks": try jwks(F.intermediate), "authority_hints": [.string(F.trustAnchor)],
            "metadata": ["federation_entity": ["organization_name": "I"]],
        ]
        change(&claims)
        return try keys.signingKey(for: F.intermediate).sign(claims, type: "entity-statement+jwt")
    }

    /// A valid Subordinate Statement of the anchor about the intermediate, changed by `change`.
    private func subordinate(_ change: (inout [String: JSONValue]) -> Void = { _ in }) throws -> String {
        var claims: [String: JSONValue] = [
            "iss": .string(F.trustAnchor), "sub": .string(F.intermediate), "iat": .int(start), "exp": .int(start + 600),
            "jwks": try jwks(F.intermediate), "source_endpoint": .string(F.trustAnchor + "/fetch"),
            "metadata_policy": F.credentialIssuerPolicy, "constraints": ["max_path_length": 1],
        ]
        change(&claims)
        return try keys.signingKey(for: F.trustAnchor).sign(claims, type: "entity-statement+jwt")
    }

    private func mark(type: String = F.basicMark) throws -> String {
        try keys.signingKey(for: F.trustAnchor).sign([
            "iss": .string(F.trustAnchor), "sub": .string(F.intermediate), "trust_mark_type": .string(type), "iat": .int(start),
        ], type: "trust-mark+jwt")
    }

    /// Asserts that decoding fails with `invalid_trust_chain` and a message containing `expected`.
    private func assertRejected(_ jwt: String, _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try EntityStatement.decode(jwt), file: file, line: line) { error in
            guard let e = error as? FederationError else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(e.code, "invalid_trust_chain", file: file, line: line)
            XCTAssertTrue(e.message.contains(expected), "\(e.message) lacks \(expected)", file: file, line: line)
        }
    }

    func testValidStatementsDecode() throws {
        let ec = try EntityStatement.decode(configuration { $0["trust_marks"] = [["trust_mark_type": .string(F.basicMark), "trust_mark": .string(try! self.mark())]] })
        XCTAssertEqual(ec.authorityHints, [F.trustAnchor])
        XCTAssertEqual(ec.trustMarks.map(\.trustMarkType), [F.basicMark])
        let ss = try EntityStatement.decode(subordinate())
        XCTAssertEqual(ss.sourceEndpoint, F.trustAnchor + "/fetch")
        XCTAssertNotNil(ss.constraints)
        let anchor = try EntityStatement.decode(configuration {
            $0["authority_hints"] = nil
            $0["trust_mark_issuers"] = [F.basicMark: [.string(F.trustAnchor)], "https://m.example/open": []]
            $0["trust_mark_owners"] = [F.basicMark: ["sub": .string(F.trustAnchor), "jwks": try! self.jwks(F.trustAnchor)]]
        })
        XCTAssertEqual(anchor.trustMarkIssuers?[F.basicMark], [F.trustAnchor])
        XCTAssertEqual(anchor.trustMarkIssuers?["https://m.example/open"], [])
        XCTAssertEqual(anchor.trustMarkOwners?[F.basicMark]?.id, F.trustAnchor)
    }

    func testCritMayListOnlyUnderstoodExtensionClaims() throws {
        assertRejected(try configuration { $0["crit"] = ["metadata"] }, "crit[0]: metadata is defined by the specification")
        assertRejected(try subordinate { $0["crit"] = ["jwks"] }, "crit[0]: jwks is defined by the specification")
        assertRejected(try configuration {
            $0["crit"] = ["https://ext.example/claim"]
            $0["https://ext.example/claim"] = 1
        }, "crit[0]: critical extension claim https://ext.example/claim is not understood")
        assertRejected(try configuration { $0["crit"] = [] }, "crit: must not be an empty array")
        assertRejected(try configuration { $0["crit"] = "x" }, "crit: expected an array")
    }

    func testEntityConfigurationMustNotCarrySubordinateClaims() throws {
        for name in ["metadata_policy", "metadata_policy_crit", "constraints", "source_endpoint"] {
            let value: JSONValue = name == "metadata_policy_crit" ? ["x"] : name == "source_endpoint" ? "https://a.example/fetch" : [:]
            assertRejected(try configuration { $0[name] = value }, "\(name): must not appear in an entity configuration")
        }
    }

    func testSubordinateStatementMustNotCarryConfigurationClaims() throws {
        let values: [String: JSONValue] = [
            "authority_hints": [.string(F.trustAnchor)], "trust_anchor_hints": [.string(F.trustAnchor)],
            "trust_marks": [], "trust_mark_issuers": [:], "trust_mark_owners": [:],
        ]
        for (name, value) in values {
            assertRejected(try subordinate { $0[name] = value }, "\(name): must not appear in a subordinate statement")
        }
    }

    func testMetadataPolicyCritMustNameUnderstoodAdditionalOperators() throws {
        assertRejected(try subordinate { $0["metadata_policy_crit"] = [] }, "metadata_policy_crit: must not be an empty array")
        for op in ["value", "add", "default", "one_of", "subset_of", "superset_of", "essential"] {
            assertRejected(try subordinate { $0["metadata_policy_crit"] = [.string(op)] }, "metadata_policy_crit[0]: \(op) is a standard operator")
        }
        assertRejected(try subordinate { $0["metadata_policy_crit"] = ["regexp"] },
                       "metadata_policy_crit[0]: critical metadata policy operator regexp is not understood")
    }

    func testMetadataValuesMustNotBeNullAndTypesMustBeObjects() throws {
        assertRejected(try configuration { $0["metadata"] = ["federation_entity": ["organization_name": nil]] },
                       "metadata.federation_entity.organization_name: must not be null")
        assertRejected(try subordinate { $0["metadata"] = ["openid_credential_issuer": ["display": nil]] },
                       "metadata.openid_credential_issuer.display: must not be null")
        assertRejected(try configuration { $0["metadata"] = ["federation_entity": "x"] }, "metadata.federation_entity: expected an object")
        assertRejected(try configuration { $0["metadata"] = [] }, "metadata: expected an object")
    }

    func testSourceEndpointMustBeAnAbsoluteHTTPURL() throws {
        for bad: JSONValue in ["/fetch", "ftp://tb.example/fetch", "https://", 5] {
            assertRejected(try subordinate { $0["source_endpoint"] = bad }, "source_endpoint:")
        }
        XCTAssertNoThrow(try EntityStatement.decode(subordinate { $0["source_endpoint"] = "http://127.0.0.1:8080/ta/fetch" }))
    }

    func testBasicClaimTypes() throws {
        assertRejected(try configuration { $0["iss"] = 1 }, "iss: expected a string")
        assertRejected(try configuration { $0["sub"] = nil }, "sub: is required")
        assertRejected(try configuration { $0["iss"] = "intermediate" }, "iss: is not an absolute URL")
        assertRejected(try configuration { $0["sub"] = .string(F.intermediate + "?x=1") }, "sub: must not contain a query")
        assertRejected(try configuration { $0["iat"] = "now" }, "iat: expected an integer")
        assertRejected(try configuration { $0["exp"] = nil }, "exp: is required")
        assertRejected(try configuration { $0["jwks"] = nil }, "jwks: is required")
        assertRejected(try configuration { $0["jwks"] = ["keys": []] }, "jwks.keys: must not be an empty array")
        assertRejected(try configuration { $0["jwks"] = [:] }, "jwks.keys: is required")
        assertRejected(try configuration {
            let key = try! self.jwks(F.intermediate)["keys"]!.arrayValue![0]
            $0["jwks"] = ["keys": [key, key]]
        }, "jwks.keys[1]: kid")
        assertRejected(try configuration { $0["authority_hints"] = [] }, "authority_hints: must not be an empty array")
        assertRejected(try configuration { $0["authority_hints"] = [.string(F.trustAnchor), 2] }, "authority_hints[1]: expected a string")
        assertRejected(try configuration { $0["trust_anchor_hints"] = ["not a url"] }, "trust_anchor_hints[0]:")
        assertRejected(try subordinate { $0["constraints"] = ["max_path_length": -1] }, "constraints: malformed constraints")
        assertRejected(try subordinate { $0["metadata_policy"] = "x" }, "metadata_policy: expected an object")
    }

    func testTrustMarksEntriesShape() throws {
        assertRejected(try configuration { $0["trust_marks"] = [:] }, "trust_marks: expected an array")
        assertRejected(try configuration { $0["trust_marks"] = ["x"] }, "trust_marks[0]: expected an object")
        assertRejected(try configuration { $0["trust_marks"] = [["trust_mark": .string(try! self.mark())]] },
                       "trust_marks[0].trust_mark_type: is required")
        assertRejected(try configuration { $0["trust_marks"] = [["trust_mark_type": .string(F.basicMark)]] }, "trust_marks[0].trust_mark: is required")
        assertRejected(try configuration { $0["trust_marks"] = [["trust_mark_type": .string(F.basicMark), "trust_mark": "nope"]] },
                       "trust_marks[0].trust_mark: is not a signed JWT")
        assertRejected(try configuration {
            $0["trust_marks"] = [["trust_mark_type": "https://m.example/other", "trust_mark": .string(try! self.mark())]]
        }, "trust_marks[0].trust_mark_type: https://m.example/other differs from the trust_mark_type of the trust mark JWT")
    }

    func testTrustMarkIssuersAndOwnersShape() throws {
        func anchor(_ change: @escaping (inout [String: JSONValue]) -> Void) throws -> String {
            try configuration { $0["authority_hints"] = nil; change(&$0) }
        }
        assertRejected(try anchor { $0["trust_mark_issuers"] = [] }, "trust_mark_issuers: expected an object")
        assertRejected(try anchor { $0["trust_mark_issuers"] = [F.basicMark: .string(F.trustAnchor)] },
                       #"trust_mark_issuers["https://tb.example/marks/basic"]: expected an array"#)
        assertRejected(try anchor { $0["trust_mark_issuers"] = [F.basicMark: [1]] },
                       #"trust_mark_issuers["https://tb.example/marks/basic"][0]: expected a string"#)
        assertRejected(try anchor { $0["trust_mark_owners"] = [F.basicMark: .string(F.trustAnchor)] },
                       #"trust_mark_owners["https://tb.example/marks/basic"]: expected an object"#)
        assertRejected(try anchor { $0["trust_mark_owners"] = [F.basicMark: ["jwks": try! self.jwks(F.trustAnchor)]] },
                       #"trust_mark_owners["https://tb.example/marks/basic"].sub: is required"#)
        assertRejected(try anchor { $0["trust_mark_owners"] = [F.basicMark: ["sub": .string(F.trustAnchor)]] },
                       #"trust_mark_owners["https://tb.example/marks/basic"].jwks: is required"#)
        assertRejected(try anchor { $0["trust_mark_owners"] = [F.basicMark: ["sub": .string(F.trustAnchor), "jwks": ["keys": 1]]] },
                       #"trust_mark_owners["https://tb.example/marks/basic"].jwks.keys: expected an array"#)
    }

    func testHeaderChecks() throws {
        let claims = try F.decode(configuration()).claims
        let key = try keys.signingKey(for: F.intermediate)
        assertRejected(try key.sign(claims, type: "jwt"), "typ must be entity-statement+jwt")
        let noKid = try JWS.sign(header: ["typ": "entity-statement+jwt"], payloadBytes: JSONValue.object(claims).bytes,
                                 key: key.privateKey, algorithm: key.algorithm)
        assertRejected(noKid, "header has no kid")
    }

    /// A rejection at decoding makes a resolve fail: the intermediate's configuration, served
    /// with a `constraints` claim (correctly signed), breaks the chain through it.
    func testRejectedStatementFailsTheResolve() throws {
        let clock = ManualClock(start)
        let (host, keys, fetcher) = try F.demo(clock: clock)
        let served = try F.decode(host.entityConfiguration(of: F.intermediate)).claims
        var bad = served
        bad["constraints"] = ["max_path_length": 0]
        fetcher.override(url: F.intermediate + "/.well-known/openid-federation",
                         body: try keys.signingKey(for: F.intermediate).sign(bad, type: "entity-statement+jwt"))
        let client = FederationHost(entities: [], keys: keys, clock: clock, database: try Database(path: ":memory:"), fetcher: fetcher)
        XCTAssertThrowsError(try client.resolveChain(subject: F.pidProvider, anchors: [F.trustAnchor: .known(try keys.publicKeys(for: F.trustAnchor))])) {
            XCTAssertEqual(($0 as? FederationError)?.code, "invalid_trust_chain")
        }
    }
}
