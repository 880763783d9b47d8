import Cryptography
import Foundation
import JOSE
import JSON
import SDJWT
import XCTest
import TestSupport

/// Cross-checks with the `sd-jwt` reference implementation (PyPI, by the RFC's editors): it
/// verifies our issuance and our KB presentation, and builds a KB presentation from our
/// issuance that our verifier must accept. Skipped when the package is not installed.
final class SDJWTInteropTests: XCTestCase {
    func testReferenceImplementationAgreesWithUs() throws {
        let parties = try Fixture.parties()
        let now = Int64(Date().timeIntervalSince1970)
        var claims = Fixture.claims(holder: parties.holderJWK)
        claims["iat"] = .int(now)
        claims["exp"] = .int(now + 3600)
        let issuer = SDJWTIssuer(key: parties.issuerKey, algorithm: .ES256, keyID: parties.issuerJWK.kid, decoysPerDigestArray: 2)
        let issued = try issuer.issue(claims: claims, plan: Fixture.plan)
        let ours = try issued.presentation(disclosing: ["given_name", "address.locality", "nationalities[0]"])
            .addingKeyBinding(key: parties.holderKey, algorithm: .ES256, audience: "https://verifier.example",
                              nonce: "nonce-1", issuedAt: now)

        let input: JSONValue = [
            "jwk": parties.issuerJWK.jsonValue, "issued": .string(issued.serialized), "presentation": .string(ours.serialized),
            "holder_pem": .string(try parties.holderKey.pemPKCS8()), "aud": "https://verifier.example", "nonce": "nonce-1",
        ]
        let output = try JSONValue.parse(PythonRunner.run(Self.script, input: input.serialized()))

        // Python's view of the full issuance equals the claims we started from.
        XCTAssertEqual(output["issued_payload"], .object(claims))
        let presented = try XCTUnwrap(output["presentation_payload"])
        XCTAssertEqual(presented["given_name"], "Erika")
        XCTAssertEqual(presented["address"], ["locality": "Köln"])
        XCTAssertEqual(presented["nationalities"], ["DE"])
        XCTAssertNil(presented["family_name"])

        // Their presentation, with their KB-JWT, through our verifier.
        let theirs = try SDJWT.parse(XCTUnwrap(output["their_presentation"]?.stringValue))
        let policy = SDJWTVerificationPolicy(now: now, keyBinding: KeyBindingExpectation(audience: "https://verifier.example", nonce: "nonce-2"))
        let verified = try theirs.verify(issuerKeys: parties.issuerKeys, policy: policy)
        XCTAssertEqual(verified.claims["given_name"], "Erika")
        XCTAssertNil(verified.claims["birthdate"])
    }

    private static let script = #"""
import sys, json
try:
    from sd_jwt.verifier import SDJWTVerifier
    from sd_jwt.holder import SDJWTHolder
    from jwcrypto.jwk import JWK
except ImportError:
    sys.exit(3)

data = json.load(sys.stdin)
issuer_key = JWK.from_json(json.dumps(data["jwk"]))
def get_key(iss, header):
    assert header["typ"] == "dc+sd-jwt", header
    return issuer_key

issued = SDJWTVerifier(data["issued"], get_key).get_verified_payload()
presented = SDJWTVerifier(data["presentation"], get_key, data["aud"], data["nonce"]).get_verified_payload()

holder = SDJWTHolder(data["issued"])
holder_key = JWK.from_pem(data["holder_pem"].encode())
holder.create_presentation({"given_name": True}, "nonce-2", data["aud"], holder_key, "ES256")

print(json.dumps({"issued_payload": issued, "presentation_payload": presented,
                  "their_presentation": holder.sd_jwt_presentation}))
"""#
}
