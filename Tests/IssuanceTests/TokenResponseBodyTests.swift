@testable import Issuance
import JSON
import XCTest

final class TokenResponseBodyTests: XCTestCase {
    /// The token endpoint sends `TokenResponseBody.bytes`, written directly; they must be the
    /// JSON writer's serialization of its `value` with and without each optional member.
    func testTokenResponseBytesAreTheSerializedValue() throws {
        let details: [JSONValue] = [["type": "openid_credential", "credential_configuration_id": "urn:eudi:pid:1",
                                     "credential_identifiers": ["id\"1"]]]
        let claims = JSONFragment(["given_name": "Erika", "nested": ["a": [1, 2, "\u{7}"]]])
        for withDetails in [false, true] {
            for previews in [nil, [], [TokenResponseBody.Preview(configurationID: "urn:eudi:pid:1", format: "dc+sd-jwt", claims: claims),
                                       TokenResponseBody.Preview(configurationID: "m", format: "mso_mdoc", claims: claims)]] {
                var body = TokenResponseBody(accessToken: "tok\\en", tokenType: "DPoP", expiresIn: 600,
                                             authorizationDetails: withDetails ? details : nil)
                body.previews = previews
                XCTAssertEqual(String(decoding: body.bytes, as: UTF8.self), body.value.serialized())
            }
        }
    }
}
