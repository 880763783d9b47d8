import HTTP
import XCTest

/// The admin bearer check every service shares.
final class AdminAccessTests: XCTestCase {
    private let access = AdminAccess(token: "s3cret-admin-token")

    func testOnlyTheAdminTokenPasses() throws {
        XCTAssertNoThrow(try access.check(authorization: "Bearer s3cret-admin-token"))
        XCTAssertNoThrow(try access.check(authorization: "bEaReR s3cret-admin-token"), "the scheme is case-insensitive (RFC 9110 §11.1)")
        XCTAssertNoThrow(try access.check(HTTPRequest(method: .post, path: "/x", headers: ["Authorization": "Bearer s3cret-admin-token"])))
        for (header, refusal) in [(nil, AdminAccess.Refusal.missing), ("Bearer", .missing), ("Bearer ", .missing),
                                  ("Basic s3cret-admin-token", .missing), ("Bearer s3cret-admin-toke", .wrongToken),
                                  ("Bearer s3cret-admin-token ", .wrongToken), ("Bearer S3CRET-ADMIN-TOKEN", .wrongToken)] {
            XCTAssertThrowsError(try access.check(authorization: header), String(describing: header)) {
                XCTAssertEqual($0 as? AdminAccess.Refusal, refusal, String(describing: header))
            }
        }
        XCTAssertEqual(AdminAccess(tokenDigest: access.tokenDigest).tokenDigest.count, 32)
    }

    /// 401 `unauthorized` with a Bearer challenge; without credentials the challenge names no
    /// error (RFC 6750 §3.1).
    func testRefusalsRenderAsBearerChallenges() throws {
        let missing = AdminAccess.Refusal.missing.response
        XCTAssertEqual(missing.status, .unauthorized)
        XCTAssertEqual(missing.header("www-authenticate"), "Bearer")
        let body = String(decoding: missing.body, as: UTF8.self)
        XCTAssertTrue(body.contains(#""error":"unauthorized""#), body)
        let wrong = AdminAccess.Refusal.wrongToken.response
        XCTAssertEqual(wrong.status, .unauthorized)
        XCTAssertEqual(wrong.header("www-authenticate"), #"Bearer error="invalid_token", error_description="wrong admin token""#)
    }
}
