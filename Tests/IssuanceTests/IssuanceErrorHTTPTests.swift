import HTTP
import Issuance
import JSON
import OAuth
import XCTest

/// How refusals at a protected resource render (RFC 6750 §3, §3.1; RFC 9449 §7.1).
final class IssuanceErrorHTTPTests: XCTestCase {
    private func challenge(_ error: IssuanceError) -> String? {
        error.headers.first { $0.name == "WWW-Authenticate" }?.value
    }

    func testChallenges() throws {
        XCTAssertEqual(challenge(.authenticationRequired("an access token is required", scheme: "Bearer")), "Bearer")
        XCTAssertEqual(challenge(.authenticationRequired("an access token is required", scheme: "DPoP")), #"DPoP algs="ES256""#)
        XCTAssertEqual(IssuanceError.authenticationRequired("x", scheme: "Bearer").status, .unauthorized)
        XCTAssertEqual(challenge(IssuanceError(.invalidToken, "unknown", authenticationScheme: "Bearer")),
                       #"Bearer error="invalid_token", error_description="unknown""#)
        let scope = IssuanceError(.insufficientScope, "the access token does not grant x", authenticationScheme: "DPoP")
        XCTAssertEqual(scope.status, .forbidden)
        XCTAssertEqual(challenge(scope),
                       #"DPoP error="insufficient_scope", error_description="the access token does not grant x", algs="ES256""#)
    }

    /// Client input quoted in a description cannot break out of the quoted-string, nor put
    /// characters RFC 6749 §5.2 forbids in the JSON body.
    func testDescriptionsAreSanitizedInBothPlaces() throws {
        let error = IssuanceError(.invalidToken, "token \"a\\\", error=\"x\"\r\nSet-Cookie: y Zoë", authenticationScheme: "Bearer")
        let header = try XCTUnwrap(challenge(error))
        XCTAssertEqual(header, #"Bearer error="invalid_token", error_description="token 'a/', error='x'  Set-Cookie: y Zo?""#)
        let body = try JSONValue.parse(error.response.body)
        let description = try XCTUnwrap(body["error_description"]?.stringValue)
        XCTAssertTrue(description.utf8.allSatisfy(ErrorDescription.isAllowed), description)
        XCTAssertEqual(description, "token 'a/', error='x'  Set-Cookie: y Zo?")
    }

    /// Every `OAuthError` becomes the `IssuanceError` of the same code, status, description,
    /// nonce, scheme and challenge, so the OAuth layer's answers reach the wire unchanged.
    func testOAuthErrorsConvertWithoutLoss() {
        for code in OAuthError.Code.allCases {
            for scheme in [nil, "DPoP", "Bearer"] as [String?] {
                let oauth = OAuthError(code, "why", dpopNonce: "n", authenticationScheme: scheme)
                let issuance = IssuanceError(oauth)
                XCTAssertEqual(issuance.code, code.rawValue, "\(code) has its namesake in IssuanceError.Code")
                XCTAssertEqual(issuance.statusCode, oauth.statusCode, "\(code)")
                XCTAssertEqual(issuance.description, "why")
                XCTAssertEqual(issuance.dpopNonce, "n")
                XCTAssertEqual(issuance.authenticationScheme, scheme)
            }
        }
        let required = IssuanceError(OAuthError.authenticationRequired("no token", scheme: "DPoP"))
        XCTAssertEqual(challenge(required), "DPoP algs=\"ES256\"")
    }
}
