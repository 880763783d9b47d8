import HTTP
import XCTest

/// Each policy's headers, exactly where they belong.
final class ResponsePolicyTests: XCTestCase {
    private let securityHeaders = ["Content-Security-Policy", "Referrer-Policy", "X-Content-Type-Options"]

    private func names(_ response: HTTPResponse) -> [String] { response.headers.map(\.name) }

    func testPublicRead() {
        let json = HTTPResponse.json(["a": 1]).applying(.publicRead)
        XCTAssertEqual(json.header("Access-Control-Allow-Origin"), "*")
        XCTAssertEqual(json.header("X-Content-Type-Options"), "nosniff", "JSON is never sniffed")
        XCTAssertNil(json.header("Cache-Control"))
        XCTAssertNil(json.header("Content-Security-Policy"))
        let jwt = HTTPResponse.jwt("a.b.c", contentType: "application/entity-statement+jwt").applying(.publicRead)
        XCTAssertEqual(jwt.header("X-Content-Type-Options"), "nosniff")
        let text = HTTPResponse.text("x").applying(.publicRead)
        XCTAssertEqual(names(text), ["Content-Type", "Access-Control-Allow-Origin"])
    }

    func testPerClient() {
        let token = HTTPResponse.json(["access_token": "t"]).applying(.perClient)
        XCTAssertEqual(token.header("Cache-Control"), "no-store")
        XCTAssertNil(token.header("Access-Control-Allow-Origin"))
        XCTAssertEqual(names(token), ["Content-Type", "Cache-Control", "X-Content-Type-Options"])
    }

    func testHTML() throws {
        let page = HTTPResponse.html("<p>hi</p>").applying(.html)
        let csp = try XCTUnwrap(page.header("Content-Security-Policy"))
        XCTAssertEqual(csp, "default-src 'none'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
        XCTAssertFalse(csp.contains("form-action"), "form-action would block the redirect to a wallet after a form post")
        XCTAssertEqual(page.header("X-Content-Type-Options"), "nosniff")
        XCTAssertEqual(page.header("Referrer-Policy"), "no-referrer")
        XCTAssertEqual(page.header("Cache-Control"), "no-store")
        XCTAssertNil(page.header("Access-Control-Allow-Origin"))
        XCTAssertEqual(page.header("Content-Type"), "text/html; charset=utf-8")
        XCTAssertEqual(page.headers.count, 5)
    }

    func testHandlerHeadersWinAndApplyingTwiceChangesNothing() {
        let own = HTTPResponse.text("x").adding(header: "access-control-allow-origin", "https://wallet.example")
            .adding(header: "Cache-Control", "private")
        let applied = own.applying(.publicRead).applying(.publicRead)
        XCTAssertEqual(applied.headers.filter { $0.name.lowercased() == "access-control-allow-origin" }.count, 1)
        XCTAssertEqual(applied.header("Access-Control-Allow-Origin"), "https://wallet.example")
        XCTAssertEqual(own.applying(.perClient).header("Cache-Control"), "private")
        XCTAssertEqual(applied.appliedPolicy, .publicRead)
    }

    func testPolicyKeepsTheMemoMark() {
        XCTAssertEqual(HTTPResponse.text("x").reusable(until: 7).applying(.publicRead).reusableUntil, 7)
    }
}
