@testable import Issuance
import JSON
import XCTest

/// The response bodies written once through the JSON writer (token, credential): what a wallet
/// parses from them, with and without each optional member, escapes included.
final class ResponseBodyTests: XCTestCase {
    func testTokenResponseContent() throws {
        let details: [JSONValue] = [["type": "openid_credential", "credential_configuration_id": "urn:eudi:pid:1",
                                     "credential_identifiers": ["id\"1"]]]
        let claimsValue: JSONValue = ["given_name": "Erika", "nested": ["a": [1, 2, "\u{7}"]]]
        let claims = JSONFragment(claimsValue)
        for withDetails in [false, true] {
            for previews in [nil, [], [TokenResponseBody.Preview(configurationID: "urn:eudi:pid:1", format: "dc+sd-jwt", claims: claims),
                                       TokenResponseBody.Preview(configurationID: "m", format: "mso_mdoc", claims: claims)]] {
                var body = TokenResponseBody(accessToken: "tok\\en", tokenType: "DPoP", expiresIn: 600,
                                             authorizationDetails: withDetails ? details : nil)
                body.previews = previews.map(TokenResponseBody.Previews.claims)
                var expected: [String: JSONValue] = ["access_token": "tok\\en", "token_type": "DPoP", "expires_in": 600]
                if withDetails { expected["authorization_details"] = .array(details) }
                if let previews {
                    expected["credential_previews"] = .array(previews.map {
                        ["credential_configuration_id": .string($0.configurationID), "format": .string($0.format), "claims": claimsValue]
                    })
                }
                let parsed = try JSONValue.parse(body.bytes)
                XCTAssertEqual(parsed, .object(expected))
                // Members in sorted order, as every other body the server writes.
                XCTAssertEqual(body.bytes, parsed.bytes)
            }
        }
    }

    func testCredentialResponseContent() throws {
        let sdJWT = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJ4In0.c2lnbmF0dXJl~WyJzYWx0IiwibmFtZSIsInZhbHVlIl0~"
        let cases: [([String], String)] = [([sdJWT, "omdkb2NUeXBl"], "n-1"), (["needs \" and \\ and \u{1} escaped"], "n\"2"), ([], "n-3")]
        for (credentials, notificationID) in cases {
            let body = CredentialResponseBody(credentials: credentials, notificationID: notificationID)
            let parsed = try JSONValue.parse(body.bytes)
            XCTAssertEqual(parsed, ["credentials": .array(credentials.map { ["credential": .string($0)] }),
                                    "notification_id": .string(notificationID)])
            XCTAssertEqual(body.bytes, parsed.bytes)
        }
    }
}
