import Cryptography
import JOSE
import JSON
import SDJWT
import Support
import XCTest

final class SDJWTVerificationTests: XCTestCase {
    private func policy(_ keyBinding: KeyBindingExpectation? = nil, now: Int64 = Fixture.now + 10) -> SDJWTVerificationPolicy {
        SDJWTVerificationPolicy(now: now, keyBinding: keyBinding)
    }

    func testFullDisclosureRebuildsTheOriginalClaims() throws {
        let parties = try Fixture.parties()
        let sdjwt = try Fixture.issue(parties, decoys: 3)
        let verified = try SDJWT.parse(sdjwt.serialized).verify(issuerKeys: parties.issuerKeys, policy: policy())
        XCTAssertEqual(JSONValue.object(verified.claims), JSONValue.object(Fixture.claims(holder: parties.holderJWK)))
        XCTAssertEqual(Set(verified.disclosed.map(\.path.description)), [
            "given_name", "family_name", "birthdate", "address", "address.street_address", "address.locality",
            "address.country", "nationalities", "nationalities[0]", "nationalities[1]",
            "age_equal_or_over[\"18\"]", "age_equal_or_over[\"21\"]",
        ])
        XCTAssertNil(verified.keyBindingClaims)
    }

    func testPresentationWithKeyBinding() throws {
        let parties = try Fixture.parties()
        let issued = try Fixture.issue(parties, decoys: 1)
        let chosen = try issued.presentation(disclosing: ["address.locality", "nationalities[1]"])
        // The parents (address, nationalities) come along, or their children would be unreferenced.
        XCTAssertEqual(Set(chosen.disclosures.compactMap(\.name)), ["address", "locality", "nationalities"])
        XCTAssertEqual(chosen.disclosures.count, 4)

        let presented = try chosen.addingKeyBinding(key: parties.holderKey, algorithm: .ES256, audience: "https://verifier.example",
                                                    nonce: "n-0S6_WzA2Mj", issuedAt: Fixture.now)
        let expectation = KeyBindingExpectation(audience: "https://verifier.example", nonce: "n-0S6_WzA2Mj")
        let verified = try SDJWT.parse(presented.serialized).verify(issuerKeys: parties.issuerKeys, policy: policy(expectation))
        XCTAssertEqual(verified.claims["address"], ["locality": "Köln"])
        XCTAssertEqual(verified.claims["nationalities"], ["FR"])
        XCTAssertNil(verified.claims["given_name"])
        XCTAssertEqual(verified.keyBindingClaims?["nonce"], "n-0S6_WzA2Mj")

        let kb = try JWS.parse(XCTUnwrap(presented.keyBindingJWT))
        XCTAssertEqual(kb.type, "kb+jwt")
        XCTAssertEqual(try kb.payload()["sd_hash"]?.stringValue, DigestAlgorithm.sha256.digest(of: chosen.serialized))
    }

    func testKeyBindingFailures() throws {
        let parties = try Fixture.parties()
        let chosen = try Fixture.issue(parties).presentation(disclosing: ["given_name"])
        let good = KeyBindingExpectation(audience: "https://v.example", nonce: "abc")
        func presented(key: PrivateKey? = nil, aud: String = "https://v.example", nonce: String = "abc",
                       iat: Int64 = Fixture.now) throws -> SDJWT {
            try chosen.addingKeyBinding(key: key ?? parties.holderKey, algorithm: .ES256, audience: aud, nonce: nonce, issuedAt: iat)
        }
        func assertKB(_ sdjwt: SDJWT, _ label: String, now: Int64 = Fixture.now + 10, _ check: (SDJWTError) -> Bool) {
            XCTAssertThrowsError(try sdjwt.verify(issuerKeys: parties.issuerKeys, policy: policy(good, now: now)), label) { error in
                XCTAssertTrue(check(error as! SDJWTError), "\(label): \(error)")
            }
        }
        let isKB: (SDJWTError) -> Bool = { if case .keyBinding = $0 { return true } else { return false } }
        assertKB(chosen, "missing KB-JWT", isKB)
        assertKB(try presented(aud: "https://evil.example"), "aud", isKB)
        assertKB(try presented(nonce: "other"), "nonce", isKB)
        assertKB(try presented(iat: Fixture.now - 3600), "stale iat", isKB)
        assertKB(try presented(iat: Fixture.now + 3600), "future iat", isKB)
        assertKB(try presented(key: try PrivateKey(generatingFor: .ES256)), "not the cnf key") { $0 == .jose(.invalidSignature) }

        // Dropping a disclosure after binding breaks sd_hash.
        let bound = try Fixture.issue(parties).presentation(disclosing: ["given_name", "family_name"])
            .addingKeyBinding(key: parties.holderKey, algorithm: .ES256, audience: "https://v.example", nonce: "abc", issuedAt: Fixture.now)
        let stripped = SDJWT(issuerJWT: bound.issuerJWT, disclosures: [bound.disclosures[0]], keyBindingJWT: bound.keyBindingJWT)
        assertKB(stripped, "sd_hash", isKB)
        XCTAssertNoThrow(try bound.verify(issuerKeys: parties.issuerKeys, policy: policy(good)))
    }

    func testTamperedAndMalformedSDJWTsRejected() throws {
        let parties = try Fixture.parties()
        let issued = try Fixture.issue(parties)
        let keys = parties.issuerKeys
        func assertRejects(_ sdjwt: SDJWT, _ label: String, _ check: (SDJWTError) -> Bool) {
            XCTAssertThrowsError(try sdjwt.verify(issuerKeys: keys, policy: policy()), label) { error in
                XCTAssertTrue(check(error as! SDJWTError), "\(label): \(error)")
            }
        }
        // The same disclosure twice.
        let first = issued.disclosures[0]
        assertRejects(SDJWT(issuerJWT: issued.issuerJWT, disclosures: issued.disclosures + [first], keyBindingJWT: nil),
                      "duplicate") { $0 == .duplicateDigest(first.digest()) }
        // A disclosure the payload does not reference.
        let stray = Disclosure(name: "given_name", value: "Mallory")
        assertRejects(SDJWT(issuerJWT: issued.issuerJWT, disclosures: issued.disclosures + [stray], keyBindingJWT: nil),
                      "unreferenced") { $0 == .unreferencedDisclosure(stray.digest()) }
        // A nested disclosure without its parent is unreferenced too.
        let locality = try XCTUnwrap(issued.disclosures.first { $0.name == "locality" })
        assertRejects(SDJWT(issuerJWT: issued.issuerJWT, disclosures: [locality], keyBindingJWT: nil),
                      "orphan") { $0 == .unreferencedDisclosure(locality.digest()) }
        // A changed payload breaks the signature.
        var parts = issued.issuerJWT.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(Array(#"{"iss":"https://evil.example","_sd":[]}"#.utf8))
        assertRejects(SDJWT(issuerJWT: parts.joined(separator: "."), disclosures: [], keyBindingJWT: nil),
                      "signature") { $0 == .jose(.invalidSignature) }
        // The wrong typ.
        let plain = try JWS.sign(header: ["typ": "JWT"], payloadBytes: Array(#"{"iss":"x"}"#.utf8), key: parties.issuerKey, algorithm: .ES256)
        assertRejects(SDJWT(issuerJWT: plain, disclosures: [], keyBindingJWT: nil), "typ") {
            if case .jose(.typeMismatch) = $0 { return true } else { return false }
        }
        // Expired.
        XCTAssertThrowsError(try issued.verify(issuerKeys: keys, policy: policy(now: Fixture.now + 86_400 + 3600)))
    }

    /// Payloads a careless or hostile issuer could sign: each breaks a rule of RFC 9901 §7.1.
    func testProcessingRulesOnCraftedPayloads() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let keys = JWKSet(keys: [JWK(publicKey: key.publicKey, algorithm: .ES256)])
        func check(_ payload: JSONValue, _ disclosures: [Disclosure], _ label: String, _ expected: (SDJWTError) -> Bool) throws {
            let jwt = try JWS.sign(header: ["typ": "dc+sd-jwt"], payloadBytes: payload.bytes, key: key, algorithm: .ES256)
            XCTAssertThrowsError(try SDJWT(issuerJWT: jwt, disclosures: disclosures, keyBindingJWT: nil)
                .verify(issuerKeys: keys, policy: policy()), label) { error in
                XCTAssertTrue(expected(error as! SDJWTError), "\(label): \(error)")
            }
        }
        let given = Disclosure(name: "given_name", value: "Erika")
        let element = Disclosure(name: nil, value: "DE")
        let isInvalidClaim: (SDJWTError) -> Bool = { if case .invalidDisclosedClaim = $0 { return true } else { return false } }

        try check(["_sd": [.string(given.digest())], "given_name": "visible"], [given], "claim already present", isInvalidClaim)
        try check(["_sd": [.string(element.digest())]], [element], "element disclosure in _sd", isInvalidClaim)
        try check(["list": [["...": .string(given.digest())]]], [given], "member disclosure in array", isInvalidClaim)
        let reserved = Disclosure(name: "_sd", value: ["x"])
        try check(["_sd": [.string(reserved.digest())]], [reserved], "reserved name", isInvalidClaim)
        try check(["_sd": [.string(given.digest())], "o": ["_sd": [.string(given.digest())]]], [given], "digest twice") {
            $0 == .duplicateDigest(given.digest())
        }
        try check(["_sd": "not an array"], [], "_sd not array") { if case .malformed = $0 { return true } else { return false } }
        try check(["_sd_alg": "md5", "a": 1], [], "unknown _sd_alg") { $0 == .unsupportedDigestAlgorithm("md5") }

        // Positive control: decoys and unknown digests are simply dropped.
        let payload: JSONValue = [
            "_sd": [.string(given.digest()), .string(Disclosure.decoyDigest())],
            "list": [["...": .string(element.digest())], ["...": .string(Disclosure.decoyDigest())], "kept"],
        ]
        let jwt = try JWS.sign(header: ["typ": "dc+sd-jwt"], payloadBytes: payload.bytes, key: key, algorithm: .ES256)
        let verified = try SDJWT(issuerJWT: jwt, disclosures: [given, element], keyBindingJWT: nil).verify(issuerKeys: keys, policy: policy())
        XCTAssertEqual(JSONValue.object(verified.claims), ["given_name": "Erika", "list": ["DE", "kept"]])
    }
}
