import Cryptography
import JOSE
import JSON
import SDJWT
import Support
import XCTest

final class SDJWTIssuanceTests: XCTestCase {
    func testIssuedPayloadHidesPlannedClaims() throws {
        let parties = try Fixture.parties()
        let sdjwt = try Fixture.issue(parties, decoys: 2)
        XCTAssertEqual(sdjwt.disclosures.count, Fixture.disclosureCount)
        XCTAssertTrue(sdjwt.serialized.hasSuffix("~"))
        XCTAssertNil(sdjwt.keyBindingJWT)

        let jws = try sdjwt.parsedIssuerJWT()
        XCTAssertEqual(jws.type, "dc+sd-jwt")
        XCTAssertEqual(jws.keyID, parties.issuerJWK.kid)
        let payload = try jws.payload()
        XCTAssertEqual(payload["_sd_alg"], "sha-256")
        for visible in ["iss", "vct", "iat", "exp", "cnf", "status"] { XCTAssertNotNil(payload[visible], visible) }
        for hidden in ["given_name", "family_name", "birthdate", "address", "nationalities"] { XCTAssertNil(payload[hidden], hidden) }

        // given_name, family_name, birthdate, address, nationalities + 2 decoys, sorted.
        let sd = try XCTUnwrap(payload["_sd"]?.stringArray)
        XCTAssertEqual(sd.count, 5 + 2)
        XCTAssertEqual(sd, sd.sorted())
        // The visible container keeps its own _sd with 2 real digests and 2 decoys.
        XCTAssertEqual(payload["age_equal_or_over"]?["_sd"]?.stringArray?.count, 4)

        // The nationalities disclosure carries an array of {"...": digest} elements.
        let nationalities = try XCTUnwrap(sdjwt.disclosures.first { $0.name == "nationalities" })
        let elements = try XCTUnwrap(nationalities.value.arrayValue)
        XCTAssertEqual(elements.count, 2)
        XCTAssertTrue(elements.allSatisfy { $0.objectValue?.keys.sorted() == ["..."] })
        // The address disclosure has its own _sd (recursive disclosure, 3 members + 2 decoys).
        let address = try XCTUnwrap(sdjwt.disclosures.first { $0.name == "address" })
        XCTAssertEqual(address.value["_sd"]?.stringArray?.count, 5)
    }

    func testX5cAndNoKeyIDHeader() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let issuer = SDJWTIssuer(key: key, algorithm: .ES256, x5c: ["MIIBleaf", "MIIBca"])
        let sdjwt = try issuer.issue(claims: ["iss": "https://i.example", "vct": "t", "a": 1], plan: .disclosing(["a"]))
        let jws = try sdjwt.parsedIssuerJWT()
        XCTAssertNil(jws.keyID)
        XCTAssertEqual(jws.header["x5c"], ["MIIBleaf", "MIIBca"])
        XCTAssertEqual(jws.algorithm, "ES256")
    }

    /// SD-JWT VC §3.2.2.2: iss, nbf, exp, cnf, vct, vct#integrity and status must not be
    /// selectively disclosable; neither may the reserved names _sd and ... be claims.
    func testPlansCannotHideAlwaysVisibleClaims() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let issuer = SDJWTIssuer(key: key, algorithm: .ES256)
        for name in ["iss", "nbf", "exp", "cnf", "vct", "vct#integrity", "status", "iat"] {
            XCTAssertThrowsError(try issuer.issue(claims: [name: "x"], plan: .disclosing([name])), name) {
                XCTAssertEqual($0 as? SDJWTError, .invalidPlan("\"\(name)\" must stay visible"))
            }
        }
        XCTAssertThrowsError(try issuer.issue(claims: ["_sd": ["x"]], plan: .plain))
        XCTAssertThrowsError(try issuer.issue(claims: ["a": ["...": 1]], plan: .object(["a": .visible(.object(["...": .disclosable]))])))
        XCTAssertThrowsError(try issuer.issue(claims: ["a": "text"], plan: .object(["a": .visible(.object(["b": .disclosable]))]))) {
            XCTAssertEqual($0 as? SDJWTError, .invalidPlan("a is not an object"))
        }
        // Nested paths name the member and the element.
        let nested: DisclosurePlan = .object(["a": .visible(.object(["b": .visible(.array(.visible(.object(["c": .disclosable]))))]))])
        XCTAssertThrowsError(try issuer.issue(claims: ["a": ["b": [["c": 1], "x"]]], plan: nested)) {
            XCTAssertEqual($0 as? SDJWTError, .invalidPlan("a.b[1] is not an object"))
        }
        XCTAssertThrowsError(try issuer.issue(claims: ["a": ["b": "x"]], plan: nested)) {
            XCTAssertEqual($0 as? SDJWTError, .invalidPlan("a.b is not an array"))
        }
    }

    func testPlanMayNameAbsentOptionalClaims() throws {
        let issuer = SDJWTIssuer(key: try PrivateKey(generatingFor: .ES256), algorithm: .ES256)
        let sdjwt = try issuer.issue(claims: ["iss": "https://i.example", "a": 1], plan: .disclosing(["a", "absent"]))
        XCTAssertEqual(sdjwt.disclosures.map(\.name), ["a"])
    }

    /// The compact form an issuer hands out (assembled in one buffer, no `Disclosure` values)
    /// parses, verifies and rebuilds every claim; a copy with other decoys keeps the header.
    func testCompactIssuanceVerifiesAndRebuildsTheClaims() throws {
        let parties = try Fixture.parties()
        let issuer = SDJWTIssuer(key: parties.issuerKey, algorithm: .ES256, keyID: parties.issuerJWK.kid, x5c: ["MIIBleaf"])
        let claims = Fixture.claims(holder: parties.holderJWK)
        let compact = try issuer.withDecoys(3).issueCompact(claims: claims, plan: Fixture.plan)
        XCTAssertTrue(compact.hasSuffix("~"))
        let parsed = try SDJWT.parse(compact)
        XCTAssertEqual(parsed.serialized, compact)
        XCTAssertEqual(parsed.disclosures.count, Fixture.disclosureCount)
        let verified = try parsed.verify(issuerKeys: parties.issuerKeys, policy: SDJWTVerificationPolicy(now: Fixture.now + 10))
        XCTAssertEqual(JSONValue.object(verified.claims), JSONValue.object(claims))
        let jws = try parsed.parsedIssuerJWT()
        XCTAssertEqual(jws.header, ["alg": "ES256", "kid": .string(parties.issuerJWK.kid!), "typ": "dc+sd-jwt", "x5c": ["MIIBleaf"]])
        // 5 top-level digests + 3 decoys.
        XCTAssertEqual(try jws.payload()["_sd"]?.stringArray?.count, 8)
        // Fresh 128-bit salts: 22 base64url characters, never repeated.
        let salts = parsed.disclosures.map(\.salt)
        XCTAssertTrue(salts.allSatisfy { $0.count == 22 && Base64URL.decode($0)?.count == 16 })
        XCTAssertEqual(Set(salts).count, salts.count)
    }

    /// Claims compiled once (`SDJWTPayloadTemplate`) and the per-credential claims added at
    /// issuance give an SD-JWT that verifies to exactly the union, with the payload's members
    /// in the serializer's order (the bytes applying the plan to the union gave) and fresh
    /// salts each time.
    func testTemplateWithAddedClaimsVerifiesToTheUnion() throws {
        let parties = try Fixture.parties()
        let issuer = SDJWTIssuer(key: parties.issuerKey, algorithm: .ES256, keyID: parties.issuerJWK.kid, decoysPerDigestArray: 2)
        var all = Fixture.claims(holder: parties.holderJWK)
        var added: [String: JSONValue] = [:]
        for name in ["iss", "iat", "exp", "cnf", "status", "vct"] { added[name] = all.removeValue(forKey: name) }
        XCTAssertEqual(added.count, 6)
        let template = try SDJWTPayloadTemplate(claims: all, plan: Fixture.plan)
        let first = try issuer.issueCompact(template: template, adding: added)
        let second = try issuer.issueCompact(template: template, adding: added)
        for compact in [first, second] {
            let parsed = try SDJWT.parse(compact)
            XCTAssertEqual(parsed.disclosures.count, Fixture.disclosureCount)
            let verified = try parsed.verify(issuerKeys: parties.issuerKeys, policy: SDJWTVerificationPolicy(now: Fixture.now + 10))
            XCTAssertEqual(JSONValue.object(verified.claims), JSONValue.object(Fixture.claims(holder: parties.holderJWK)))
            // The payload is the serializer's own output for its value: sorted members, no spaces.
            let payload = try parsed.parsedIssuerJWT().payloadBytes
            XCTAssertEqual(try JSONValue.parse(payload).bytes, payload)
        }
        XCTAssertNotEqual(try SDJWT.parse(first).disclosures.map(\.salt), try SDJWT.parse(second).disclosures.map(\.salt))
    }

    /// With nothing to disclose the payload is still the claims, the added ones and `_sd_alg`.
    func testPlainPlanKeepsEveryClaimVisible() throws {
        let issuer = SDJWTIssuer(key: try PrivateKey(generatingFor: .ES256), algorithm: .ES256)
        for plan: DisclosurePlan in [.plain, .object([:]), .object(["absent": .disclosable])] {
            let sdjwt = try issuer.issue(claims: ["iss": "https://i.example", "a": ["b": 1]], plan: plan)
            XCTAssertEqual(try sdjwt.parsedIssuerJWT().payload(), ["iss": "https://i.example", "a": ["b": 1], "_sd_alg": "sha-256"])
            XCTAssertTrue(sdjwt.disclosures.isEmpty)
            let template = try SDJWTPayloadTemplate(claims: ["a": ["b": 1]], plan: plan)
            let compact = try issuer.issueCompact(template: template, adding: ["iss": "https://i.example"])
            XCTAssertEqual(try SDJWT.parse(compact).parsedIssuerJWT().payload(),
                           ["iss": "https://i.example", "a": ["b": 1], "_sd_alg": "sha-256"])
        }
    }

    /// An added claim may not repeat a claim of the template or one its plan names, nor use a
    /// reserved name; an object that gets an `_sd` may not have one of its own.
    func testTemplateRefusesClashingClaims() throws {
        let issuer = SDJWTIssuer(key: try PrivateKey(generatingFor: .ES256), algorithm: .ES256)
        let template = try SDJWTPayloadTemplate(claims: ["a": 1, "b": 2], plan: .disclosing(["a", "c"]))
        for name in ["a", "b", "c"] {
            XCTAssertThrowsError(try issuer.issueCompact(template: template, adding: [name: 3])) {
                XCTAssertEqual($0 as? SDJWTError, .invalidPlan("claim \"\(name)\" is both prepared and added"))
            }
        }
        XCTAssertThrowsError(try issuer.issueCompact(template: template, adding: ["_sd": ["x"]])) {
            XCTAssertEqual($0 as? SDJWTError, .invalidPlan("claim name \"_sd\" is reserved"))
        }
        XCTAssertNoThrow(try issuer.issueCompact(template: template, adding: ["iss": "https://i.example"]))
        XCTAssertThrowsError(try SDJWTPayloadTemplate(claims: ["a": ["_sd": ["x"], "b": 1]],
                                                     plan: .object(["a": .visible(.disclosing(["b"]))]))) {
            XCTAssertEqual($0 as? SDJWTError, .invalidPlan("claim name \"_sd\" is reserved"))
        }
    }

    /// A disclosure made by the issuer has exactly the bytes `Disclosure(salt:name:value:)`
    /// serializes for the same parts (escapes in names and values included), so its digest
    /// is the one the payload carries.
    func testIssuedDisclosuresMatchTheSerializer() throws {
        let issuer = SDJWTIssuer(key: try PrivateKey(generatingFor: .ES256), algorithm: .ES256)
        let claims: [String: JSONValue] = ["iss": "https://i.example", "q\"uote": "a\\b\n", "n": ["x": [1, 2.5, nil, true]],
                                           "list": ["é", "\u{1}"]]
        let plan: DisclosurePlan = .object(["q\"uote": .disclosable, "n": .disclosable, "list": .visible(.array(.disclosable))])
        let sdjwt = try issuer.issue(claims: claims, plan: plan)
        let payload = try sdjwt.parsedIssuerJWT().payload()
        var digests = Set(payload["_sd"]?.stringArray ?? [])
        for element in payload["list"]?.arrayValue ?? [] { digests.insert(element["..."]?.stringValue ?? "") }
        XCTAssertEqual(sdjwt.disclosures.count, 4)
        for disclosure in sdjwt.disclosures {
            let remade = Disclosure(salt: disclosure.salt, name: disclosure.name, value: disclosure.value)
            XCTAssertEqual(disclosure.encoded, remade.encoded)
            XCTAssertTrue(digests.contains(disclosure.digest()))
        }
    }

    func testParseSerializeRoundTrip() throws {
        let sdjwt = try Fixture.issue(try Fixture.parties())
        XCTAssertEqual(try SDJWT.parse(sdjwt.serialized), sdjwt)
        XCTAssertThrowsError(try SDJWT.parse("a.b.c"))  // no tilde
        XCTAssertThrowsError(try SDJWT.parse("~"))
        XCTAssertThrowsError(try SDJWT.parse(sdjwt.issuerJWT + "~~"))
        XCTAssertThrowsError(try SDJWT.parse(sdjwt.issuerJWT + "~%%%~"))
    }
}
