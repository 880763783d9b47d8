import HTTP
import JSON
import XCTest

final class HTTPRequestTests: XCTestCase {
    func testQueryIsDecodedInOrderWithRepeats() {
        let request = HTTPRequest(method: "GET", path: "/x", rawQuery: "a=1&b=two+words&a=%2Fslash%3D&empty=&flag&&c=%E2%9C%93")
        XCTAssertEqual(request.query.map(\.name), ["a", "b", "a", "empty", "flag", "c"])
        XCTAssertEqual(request.query.map(\.value), ["1", "two words", "/slash=", "", "", "✓"])
        XCTAssertEqual(request.queryValues("a"), ["1", "/slash="])
        XCTAssertEqual(request.queryNames, ["a", "b", "empty", "flag", "c"])
    }

    func testMalformedEscapesAreKeptLiterally() {
        let request = HTTPRequest(method: "GET", path: "/", rawQuery: "x=%zz%4&y=100%")
        XCTAssertEqual(request.queryValues("x"), ["%zz%4"])
        XCTAssertEqual(request.queryValues("y"), ["100%"])
    }

    func testNoQuery() {
        let request = HTTPRequest(method: "GET", path: "/")
        XCTAssertNil(request.rawQuery)
        XCTAssertTrue(request.query.isEmpty)
    }

    func testHeadersAreCaseInsensitive() {
        let request = HTTPRequest(method: "GET", path: "/", headers: ["Content-Type": "application/json", "x-a": "1"])
        XCTAssertEqual(request.headers["content-type"], "application/json")
        XCTAssertEqual(request.header("CONTENT-TYPE"), "application/json")
        XCTAssertEqual(request.header("content-type"), "application/json", "stored names are lower case: found as they are")
        XCTAssertEqual(request.header("Content-Type"), "application/json")
        XCTAssertEqual(request.header("X-A"), "1")
        XCTAssertNil(request.header("X-B"))
        XCTAssertNil(request.header("missing"))
    }

    func testRepeatedHeadersAreJoinedAndLookedUpByAnyCase() {
        let request = HTTPRequest(method: "GET", path: "/", headers: ["Accept": "a", "accept": "b", "X-Forwarded-Host": "h"])
        XCTAssertEqual(request.header("ACCEPT"), "a, b", "repeats joined in name order")
        XCTAssertEqual(request.header("x-forwarded-host"), "h")
        XCTAssertEqual(request.fields.map(\.name), ["accept", "x-forwarded-host"])
        XCTAssertEqual(request.headers, ["accept": "a, b", "x-forwarded-host": "h"])
        XCTAssertNil(request.header("host"))
    }

    func testFormParameters() {
        let request = HTTPRequest(
            method: "POST", path: "/token",
            headers: ["content-type": "application/x-www-form-urlencoded; charset=UTF-8"],
            body: Array("grant_type=authorization_code&code=a%2Bb+c&scope=x&scope=y".utf8))
        let form = request.formParameters()
        XCTAssertEqual(form?.map(\.name), ["grant_type", "code", "scope", "scope"])
        XCTAssertEqual(form?.map(\.value), ["authorization_code", "a+b c", "x", "y"])
    }

    func testFormParametersNeedFormContentType() {
        let request = HTTPRequest(method: "POST", path: "/", headers: ["content-type": "application/json"], body: Array("a=b".utf8))
        XCTAssertNil(request.formParameters())
        XCTAssertNil(HTTPRequest(method: "POST", path: "/", body: Array("a=b".utf8)).formParameters())
    }

    func testJSONBody() throws {
        let request = HTTPRequest(
            method: "POST", path: "/", headers: ["Content-Type": "Application/JSON ; charset=utf-8"],
            body: Array(#"{"a":[1,"b"]}"#.utf8))
        XCTAssertEqual(try request.jsonBody(), ["a": [1, "b"]])
    }

    func testJSONBodyErrors() {
        let wrongType = HTTPRequest(method: "POST", path: "/", headers: ["content-type": "text/plain"], body: Array("{}".utf8))
        XCTAssertThrowsError(try wrongType.jsonBody()) { error in
            guard case HTTPError.unsupportedMediaType = error else { return XCTFail("\(error)") }
        }
        let missingType = HTTPRequest(method: "POST", path: "/", body: Array("{}".utf8))
        XCTAssertThrowsError(try missingType.jsonBody()) { error in
            guard case HTTPError.unsupportedMediaType = error else { return XCTFail("\(error)") }
        }
        let broken = HTTPRequest(method: "POST", path: "/", headers: ["content-type": "application/json"], body: Array("{".utf8))
        XCTAssertThrowsError(try broken.jsonBody()) { error in
            guard case HTTPError.badRequest = error else { return XCTFail("\(error)") }
        }
    }
}
