@testable import Explorer
import Federation
import XCTest

/// The chain page's input checks and rendering without a host (the whole page against a real
/// federation is in Tests/interop/test_explorer_chain.py).
final class ChainPageTests: XCTestCase {
    func testMalformedIdentifiersAreRefusedWithAReason() {
        XCTAssertNil(Explorer.malformedIdentifier("https://tb.example/ta"))
        XCTAssertNil(Explorer.malformedIdentifier("http://127.0.0.1:8080/relying-party"))
        XCTAssertNotNil(Explorer.malformedIdentifier("javascript:alert(1)"))
        XCTAssertNotNil(Explorer.malformedIdentifier("ftp://tb.example/x"))
        XCTAssertNotNil(Explorer.malformedIdentifier("https:///nohost"))
        XCTAssertNotNil(Explorer.malformedIdentifier("https://tb.example/x?sub=y"))
        XCTAssertNotNil(Explorer.malformedIdentifier("https://tb.example/x#f"))
        XCTAssertNotNil(Explorer.malformedIdentifier("https://tb.example/a b"))
        XCTAssertNotNil(Explorer.malformedIdentifier("https://tb.example/\u{7}"))
        XCTAssertNotNil(Explorer.malformedIdentifier("https://tb.example/" + String(repeating: "a", count: 3000)))
        XCTAssertNotNil(Explorer.malformedIdentifier("not a url"))
    }

    func testResolverErrorsBecomeClientErrorsNeverServerErrors() {
        XCTAssertEqual(Explorer.problem(.invalidRequest("outside the allow-list")).kind, .badRequest)
        XCTAssertEqual(Explorer.problem(.invalidTrustAnchor("x")).kind, .badRequest)
        XCTAssertEqual(Explorer.problem(.invalidSubject("x")).kind, .notFound)
        XCTAssertEqual(Explorer.problem(.temporarilyUnavailable("slow")).kind, .notFound)
        XCTAssertEqual(Explorer.problem(.serverError("x")).kind, .notFound)
    }

    func testFormAndProblemAreEscaped() {
        let trace = ChainTrace(subject: "<script>alert(1)</script>", trustAnchor: "https://tb.example/ta\"><b>",
                               anchors: ["https://tb.example/ta"], exploration: nil,
                               problem: .init(kind: .badRequest, message: "bad <img src=x onerror=alert(1)>"), now: 0)
        let html = ChainPage.render(trace, baseURL: "https://tb.example")
        XCTAssertFalse(html.contains("<script>alert"))
        XCTAssertFalse(html.contains("<img src=x"))
        XCTAssertFalse(html.contains("\"><b>"))
        XCTAssertTrue(html.contains("&lt;script&gt;"))
        XCTAssertTrue(html.contains("id=\"problem\""))
        XCTAssertTrue(html.contains("<option value=\"https://tb.example/ta\">"))
        XCTAssertTrue(html.contains("action=\"/explorer/chain\""))
    }

    func testHeaderOfACompactJWS() {
        // {"alg":"ES256","kid":"k1","typ":"entity-statement+jwt"}
        let header = "eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIiwidHlwIjoiZW50aXR5LXN0YXRlbWVudCtqd3QifQ"
        XCTAssertEqual(ChainPage.header(of: header + ".e30.sig")?["kid"]?.stringValue, "k1")
        XCTAssertNil(ChainPage.header(of: "!!!.e30.sig"))
    }
}
