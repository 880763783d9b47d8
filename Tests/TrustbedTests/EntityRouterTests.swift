import XCTest
import HTTP
@testable import Trustbed

final class EntityRouterTests: XCTestCase {
    let router = EntityRouter(
        entityIDs: ["http://127.0.0.1:8080/ta", "http://127.0.0.1:8080/ta/sub", "https://anchor.test"],
        baseURL: "http://127.0.0.1:8080")

    func testLongestPrefixWins() {
        let r = router.match(HTTPRequest(method: "GET", path: "/ta/sub/fetch", headers: ["host": "localhost:8080"]))
        XCTAssertEqual(r?.entityID, "http://127.0.0.1:8080/ta/sub")
        XCTAssertEqual(r?.rest, "/fetch")
        XCTAssertEqual(router.match(HTTPRequest(method: "GET", path: "/ta/.well-known/openid-federation"))?.entityID, "http://127.0.0.1:8080/ta")
    }

    func testSegmentBoundary() {
        XCTAssertNil(router.match(HTTPRequest(method: "GET", path: "/tax/fetch")))
    }

    func testHostRoutingHonoursForwardedHeaders() {
        let r = router.match(HTTPRequest(method: "GET", path: "/.well-known/openid-federation",
                                         headers: ["host": "127.0.0.1:8080", "x-forwarded-host": "anchor.test", "x-forwarded-proto": "https"]))
        XCTAssertEqual(r?.entityID, "https://anchor.test")
        XCTAssertNil(router.match(HTTPRequest(method: "GET", path: "/.well-known/openid-federation", headers: ["host": "anchor.test"])),
                     "plain http must not match an https entity ID")
        let chained = router.match(HTTPRequest(method: "GET", path: "/fetch",
                                               headers: ["x-forwarded-host": " Anchor.TEST , inner.proxy", "x-forwarded-proto": "HTTPS, http"]))
        XCTAssertEqual(chained?.entityID, "https://anchor.test", "first forwarded value wins; scheme and host compare case-insensitively")
        XCTAssertEqual(chained?.rest, "/fetch")
    }
}
