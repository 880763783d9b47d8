import HTTP
import Issuance
import JSON
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
}
