import JSON
import Support
@testable import Verification
import XCTest

final class DCQLQueryTests: XCTestCase {
    private func parse(_ text: String) throws -> DCQLQuery { try DCQLQuery.parse(JSONValue.parse(Array(text.utf8))) }

    private func refusal(_ text: String) -> String? {
        do { _ = try parse(text); return nil } catch { return "\(error)" }
    }

    func testEveryTemplateParses() throws {
        for template in DCQLTemplate.allCases {
            let query = try DCQLQuery.parse(template.query)
            XCTAssertEqual(query.credentials.map(\.id), ["pid"], template.rawValue)
            XCTAssertEqual(query.credentials[0].format, "dc+sd-jwt")
        }
        XCTAssertNil(try DCQLQuery.parse(DCQLTemplate.fullPID.query).credentials[0].claims)
        XCTAssertEqual(try DCQLQuery.parse(DCQLTemplate.ageOver18.query).credentials[0].claims?[0].path,
                       [.member("age_equal_or_over"), .member("18")])
    }

    func testPathsValuesAndMdoc() throws {
        let q = try parse("""
            {"credentials": [{"id": "a-1", "format": "dc+sd-jwt", "meta": {"vct_values": ["v"]},
              "claims": [{"path": ["nationalities", null]}, {"path": ["address", "country"], "values": ["DE", "NL"]}, {"path": ["x", 0]}]},
             {"id": "m", "format": "mso_mdoc", "meta": {"doctype_value": "eu.europa.ec.eudi.pid.1"},
              "claims": [{"path": ["eu.europa.ec.eudi.pid.1", "family_name"], "intent_to_retain": false}]}]}
            """)
        let claims = try XCTUnwrap(q.credentials[0].claims)
        XCTAssertEqual(claims[0].path, [.member("nationalities"), .all])
        XCTAssertEqual(claims[0].pathDescription, "nationalities[*]")
        XCTAssertEqual(claims[1].values, [.string("DE"), .string("NL")])
        XCTAssertEqual(claims[2].path, [.member("x"), .index(0)])
        XCTAssertEqual(q.credentials[1].types, ["eu.europa.ec.eudi.pid.1"])
    }

    func testRefusalsNameTheMember() {
        let sd = #""format": "dc+sd-jwt", "meta": {"vct_values": ["v"]}"#
        XCTAssertNotNil(refusal(#"{"credentials": []}"#)?.contains("credentials"))
        XCTAssertTrue(refusal(#"{"credentials": [{"id": "a", \#(sd)}], "credential_sets": []}"#)!.contains("credential_sets"))
        XCTAssertTrue(refusal(#"{"credentials": [{"id": "a", \#(sd)}], "credential_sets": [{"options": [["b"]]}]}"#)!
            .contains("b is not the id of a credential query"))
        XCTAssertTrue(refusal(#"{"credentials": [{"id": "a", \#(sd), "claim_sets": [["x"]]}]}"#)!.contains("claim_sets needs claims"))
        XCTAssertTrue(refusal(#"{"credentials": [{"id": "a", \#(sd), "trusted_authorities": []}]}"#)!.contains("not supported"))
        XCTAssertTrue(refusal(#"{"credentials": [{"id": "a b", \#(sd)}]}"#)!.contains("dcql_query.credentials[0].id"))
        XCTAssertTrue(refusal(#"{"credentials": [{"id": "a", \#(sd)}, {"id": "a", \#(sd)}]}"#)!.contains("used twice"))
        XCTAssertTrue(refusal(#"{"credentials": [{"id": "a", "format": "ldp_vc", "meta": {}}]}"#)!.contains("format"))
        XCTAssertTrue(refusal(#"{"credentials": [{"id": "a", \#(sd), "claims": [{"path": [true]}]}]}"#)!.contains("path element"))
        XCTAssertTrue(refusal(#"{"credentials": [{"id": "a", \#(sd), "claims": [{"path": ["x"]}], "claim_sets": [["x"]]}]}"#)!
            .contains("x is not the id of a claim"))
        XCTAssertTrue(refusal(#"{"credentials": [{"id": "m", "format": "mso_mdoc", "meta": {"doctype_value": "d"}, "claims": [{"path": ["ns"]}]}]}"#)!
            .contains("namespace"))
        XCTAssertTrue(refusal(#"{"credentials": [{"id": "a", \#(sd), "require_cryptographic_holder_binding": false}]}"#)!
            .contains("holder binding"))
        XCTAssertTrue(refusal(#"{"credentials": [{"id": "a", \#(sd), "surprise": 1}]}"#)!.contains("surprise"))
    }

    func testCredentialSetsAndClaimSets() throws {
        let q = try parse("""
            {"credentials": [
              {"id": "pid", "format": "dc+sd-jwt", "meta": {"vct_values": ["v"]},
               "claims": [{"id": "a", "path": ["age_equal_or_over", "18"]}, {"id": "b", "path": ["birthdate"]}, {"id": "n", "path": ["given_name"]}],
               "claim_sets": [["a"], ["b", "n"]]},
              {"id": "mdl", "format": "mso_mdoc", "meta": {"doctype_value": "d"}}],
             "credential_sets": [{"options": [["pid"], ["mdl"]], "purpose": "age"}, {"options": [["mdl"]], "required": false}]}
            """)
        XCTAssertEqual(q.credentialSets, [DCQLQuery.CredentialSet(options: [["pid"], ["mdl"]], required: true),
                                          DCQLQuery.CredentialSet(options: [["mdl"]], required: false)])
        let pid = q.credentials[0]
        XCTAssertEqual(pid.claimOptions?.map { $0.compactMap(\.id) }, [["a"], ["b", "n"]])

        // The first option answered; the second; neither (one claim of the second only); more than one option's claims.
        let first = DCQLClaimMatching.check(pid, claims: ["age_equal_or_over": ["18": true]], disclosed: [JSONPath("age_equal_or_over", "18")])
        XCTAssertTrue(first.ok, first.detail)
        XCTAssertTrue(first.detail.hasPrefix("claim set 1 of 2"), first.detail)
        let second = DCQLClaimMatching.check(pid, claims: ["birthdate": "1990-01-01", "given_name": "Erika"],
                                             disclosed: [JSONPath("birthdate"), JSONPath("given_name")])
        XCTAssertTrue(second.ok && second.detail.hasPrefix("claim set 2 of 2"), second.detail)
        let partial = DCQLClaimMatching.check(pid, claims: ["birthdate": "1990-01-01"], disclosed: [JSONPath("birthdate")])
        XCTAssertFalse(partial.ok)
        XCTAssertTrue(partial.detail.contains("no claim set is answered") && partial.detail.contains("given_name is missing"), partial.detail)
        let both = DCQLClaimMatching.check(pid, claims: ["age_equal_or_over": ["18": true], "birthdate": "1990-01-01"],
                                           disclosed: [JSONPath("age_equal_or_over", "18"), JSONPath("birthdate")])
        XCTAssertFalse(both.ok, "disclosing beyond the chosen option is refused")
        XCTAssertTrue(both.detail.contains("discloses birthdate"), both.detail)
    }

    func testClaimSelectionAndCoverage() throws {
        let claims: JSONValue = ["address": ["country": "DE"], "nationalities": ["DE", "NL"]]
        XCTAssertEqual(DCQLClaimMatching.select([.member("address"), .member("country")], in: claims), ["DE"])
        XCTAssertEqual(DCQLClaimMatching.select([.member("nationalities"), .all], in: claims), ["DE", "NL"])
        XCTAssertEqual(DCQLClaimMatching.select([.member("nationalities"), .index(5)], in: claims), [])
        XCTAssertEqual(DCQLClaimMatching.select([.member("missing")], in: claims), [])
        // The object disclosed to reach a requested member, and members inside a requested object.
        XCTAssertTrue(DCQLClaimMatching.covers([.member("address"), .member("country")], JSONPath("address")))
        XCTAssertTrue(DCQLClaimMatching.covers([.member("address")], JSONPath("address", "locality")))
        XCTAssertTrue(DCQLClaimMatching.covers([.member("nationalities"), .all], JSONPath("nationalities").appending(index: 1)))
        XCTAssertFalse(DCQLClaimMatching.covers([.member("address"), .member("country")], JSONPath("address", "locality")))
        XCTAssertFalse(DCQLClaimMatching.covers([.member("given_name")], JSONPath("family_name")))
    }

    func testConfigurationRefusesUnknownMembers() {
        XCTAssertThrowsError(try VerifierConfiguration.parse(JSONReader(["response_mod": "direct_post"]))) { error in
            XCTAssertTrue("\(error)".contains("response_mod"), "\(error)")
        }
        XCTAssertThrowsError(try VerifierConfiguration.parse(JSONReader(["client_id_prefix": "redirect_uri"])))
        XCTAssertEqual(try VerifierConfiguration.parse(JSONReader(["response_mode": "direct_post"])).responseMode, .directPost)
    }
}
