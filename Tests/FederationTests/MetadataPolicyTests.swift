import XCTest
import JSON
@testable import Federation

/// Behaviour the public vectors do not cover: validation, critical operators, chain resolution,
/// superior metadata, `scope`, and metadata of the wrong type.
final class MetadataPolicyTests: XCTestCase {
    private func code(_ body: () throws(MetadataPolicyError) -> Void) -> String? {
        do { try body(); return nil } catch { return error.code }
    }

    func testValidateChecksStructureAndOperandTypes() {
        let bad: [JSONValue] = [
            "x", [:], ["openid_relying_party": [:]], ["openid_relying_party": ["a": [:]]],
            ["openid_relying_party": ["a": "value"]],
            ["openid_relying_party": ["a": ["add": "x"]]],
            ["openid_relying_party": ["a": ["default": nil]]],
            ["openid_relying_party": ["a": ["one_of": []]]],
            ["openid_relying_party": ["a": ["subset_of": [nil]]]],
            ["openid_relying_party": ["a": ["superset_of": [["x"]]]]],
            ["openid_relying_party": ["a": ["essential": "true"]]],
            ["openid_relying_party": ["a": ["one_of": ["x"], "subset_of": ["x"]]]],
            ["openid_relying_party": ["a": ["value": "x", "one_of": ["y"]]]],
            ["openid_relying_party": ["a": ["value": nil, "essential": true]]],
            ["openid_relying_party": ["a": ["add": ["x"], "subset_of": ["y"]]]],
        ]
        for p in bad { XCTAssertEqual(code { () throws(MetadataPolicyError) in try MetadataPolicy.validate(p, crit: []) }, "invalid_policy", p.serialized()) }

        let good: JSONValue = ["openid_relying_party": [
            "grant_types": ["default": ["authorization_code"], "subset_of": ["authorization_code", "refresh_token"], "superset_of": ["authorization_code"]],
            "token_endpoint_auth_method": ["one_of": ["private_key_jwt"], "essential": true],
            "logo_uri": ["value": nil, "essential": false],
        ]]
        XCTAssertNil(code { () throws(MetadataPolicyError) in try MetadataPolicy.validate(good, crit: []) })
    }

    func testUnknownOperatorIsIgnoredUnlessCritical() throws {
        let p: JSONValue = ["openid_provider": ["op_policy_uri": ["regexp": "^https://"]]]
        XCTAssertNil(code { () throws(MetadataPolicyError) in try MetadataPolicy.validate(p, crit: []) })
        XCTAssertEqual(code { () throws(MetadataPolicyError) in try MetadataPolicy.validate(p, crit: ["regexp"]) }, "invalid_policy")

        let leaf: [String: JSONValue] = ["openid_provider": ["op_policy_uri": "http://x"]]
        let out = try MetadataPolicy.resolve(leafMetadata: leaf, superiorMetadata: nil, policies: [(policy: p.objectValue!, crit: [])])
        XCTAssertEqual(out, leaf)
        // Critical names are collected from every statement in the chain (section 6.1.4.1).
        let ta: [String: JSONValue] = ["openid_provider": ["issuer": ["essential": true]]]
        XCTAssertEqual(code { () throws(MetadataPolicyError) in
            _ = try MetadataPolicy.resolve(leafMetadata: leaf, superiorMetadata: nil,
                                           policies: [(policy: ta, crit: ["regexp"]), (policy: p.objectValue!, crit: [])])
        }, "invalid_policy")
    }

    /// The example of section 6.1.5: two policies, an intermediate's `metadata`, one RP.
    func testSpecExampleResolves() throws {
        let ta: [String: JSONValue] = ["openid_relying_party": [
            "grant_types": ["default": ["authorization_code"], "subset_of": ["authorization_code", "refresh_token"], "superset_of": ["authorization_code"]],
            "token_endpoint_auth_method": ["one_of": ["private_key_jwt", "self_signed_tls_client_auth"], "essential": true],
            "token_endpoint_auth_signing_alg": ["one_of": ["PS256", "ES256"]],
            "subject_type": ["value": "pairwise"],
            "contacts": ["add": ["helpdesk@federation.example.org"]],
        ]]
        let int: [String: JSONValue] = ["openid_relying_party": [
            "grant_types": ["subset_of": ["authorization_code"]],
            "token_endpoint_auth_method": ["one_of": ["self_signed_tls_client_auth"]],
            "contacts": ["add": ["helpdesk@org.example.org"]],
        ]]
        let superior: [String: JSONValue] = ["openid_relying_party": [
            "sector_identifier_uri": "https://org.example.org/sector-ids.json",
            "policy_uri": "https://org.example.org/policy.html",
        ]]
        let leaf: [String: JSONValue] = ["openid_relying_party": [
            "redirect_uris": ["https://rp.example.org/callback"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "self_signed_tls_client_auth",
            "contacts": ["rp_admins@rp.example.org"],
        ]]
        let out = try MetadataPolicy.resolve(leafMetadata: leaf, superiorMetadata: superior,
                                             policies: [(policy: ta, crit: []), (policy: int, crit: [])])
        let want: JSONValue = [
            "redirect_uris": ["https://rp.example.org/callback"],
            "grant_types": ["authorization_code"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "self_signed_tls_client_auth",
            "subject_type": "pairwise",
            "sector_identifier_uri": "https://org.example.org/sector-ids.json",
            "policy_uri": "https://org.example.org/policy.html",
            "contacts": ["rp_admins@rp.example.org", "helpdesk@federation.example.org", "helpdesk@org.example.org"],
        ]
        XCTAssertTrue(out["openid_relying_party"]!.jsonEquals(want), out["openid_relying_party"]!.serialized())
    }

    func testSuperiorMetadataOnlyTouchesEntityTypesTheLeafHas() throws {
        let leaf: [String: JSONValue] = ["openid_relying_party": ["client_name": "leaf", "logo_uri": "https://l/x.png"]]
        let superior: [String: JSONValue] = ["openid_relying_party": ["client_name": "set by superior"], "openid_provider": ["issuer": "https://x"]]
        let policy: [String: JSONValue] = ["openid_provider": ["issuer": ["essential": true]]]
        let out = try MetadataPolicy.resolve(leafMetadata: leaf, superiorMetadata: superior, policies: [(policy: policy, crit: [])])
        XCTAssertEqual(out, ["openid_relying_party": ["client_name": "set by superior", "logo_uri": "https://l/x.png"]])
    }

    func testMergeConflictsAndSetSemantics() throws {
        let sup: EntityTypePolicy = ["a": ["one_of": ["x", "y"]], "g": ["value": ["p", "q"]]]
        XCTAssertEqual(code { () throws(MetadataPolicyError) in _ = try MetadataPolicy.merge(superior: sup, subordinate: ["a": ["one_of": ["z"]]]) }, "invalid_policy")
        // Arrays given to `value` by both are the same set in another order: no conflict.
        let merged = try MetadataPolicy.merge(superior: sup, subordinate: ["g": ["value": ["q", "p"], "essential": true]])
        XCTAssertEqual(merged["g"], ["value": ["p", "q"], "essential": true])
        // essential: a subordinate cannot turn a superior's true off.
        let e = try MetadataPolicy.merge(superior: ["a": ["essential": true]], subordinate: ["a": ["essential": false]])
        XCTAssertEqual(e["a"], ["essential": true])
    }

    func testScopeIsTreatedAsSpaceSeparatedArray() throws {
        let policy: EntityTypePolicy = ["scope": ["subset_of": ["openid", "email", "profile"], "superset_of": ["openid"]]]
        XCTAssertEqual(try MetadataPolicy.apply(policy, to: ["scope": "openid  email address"]), ["scope": "openid email"])
        XCTAssertEqual(code { () throws(MetadataPolicyError) in _ = try MetadataPolicy.apply(policy, to: ["scope": "email"]) }, "invalid_metadata")
        let d: EntityTypePolicy = ["scope": ["default": "openid email", "subset_of": ["openid", "email"]]]
        XCTAssertEqual(try MetadataPolicy.apply(d, to: [:]), ["scope": "openid email"])
    }

    func testWrongMetadataTypeIsInvalidMetadata() {
        for policy: EntityTypePolicy in [["contacts": ["add": ["a"]]], ["contacts": ["subset_of": ["a"]]], ["contacts": ["superset_of": ["a"]]]] {
            XCTAssertEqual(code { () throws(MetadataPolicyError) in _ = try MetadataPolicy.apply(policy, to: ["contacts": "a"]) }, "invalid_metadata")
        }
        XCTAssertEqual(code { () throws(MetadataPolicyError) in
            _ = try MetadataPolicy.resolve(leafMetadata: ["openid_relying_party": "x"], superiorMetadata: nil,
                                           policies: [(policy: ["openid_relying_party": ["a": ["essential": true]]], crit: [])])
        }, "invalid_metadata")
    }

    func testEntityTypeWithPolicyButNoMetadataStaysAbsent() throws {
        let out = try MetadataPolicy.resolve(leafMetadata: ["federation_entity": [:]], superiorMetadata: nil,
                                             policies: [(policy: ["openid_relying_party": ["a": ["value": "x"]]], crit: [])])
        XCTAssertEqual(out, ["federation_entity": [:]])
    }

    func testCriticalOperatorsClaim() throws {
        XCTAssertEqual(try MetadataPolicy.criticalOperators(from: nil), [])
        XCTAssertEqual(try MetadataPolicy.criticalOperators(from: ["regexp"]), ["regexp"])
        for bad: JSONValue in [[], "regexp", [1], ["one_of"]] {
            XCTAssertThrowsError(try MetadataPolicy.criticalOperators(from: bad), bad.serialized())
        }
    }

    func testErrorCodes() {
        XCTAssertEqual(MetadataPolicyError.invalidPolicy("x").code, "invalid_policy")
        XCTAssertEqual(MetadataPolicyError.invalidMetadata("x").code, "invalid_metadata")
    }
}
