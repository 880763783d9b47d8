import HTTP
import JSON
import XCTest

final class HTTPResponseTests: XCTestCase {
    func testJSON() throws {
        let response = HTTPResponse.json(["a": 1], status: 201)
        XCTAssertEqual(response.status, 201)
        XCTAssertEqual(response.header("content-type"), "application/json")
        XCTAssertEqual(try JSONValue.parse(response.body), ["a": 1])
    }

    func testErrorFormat() throws {
        let response = HTTPResponse.error(status: 400, code: "invalid_request", description: "missing sub")
        XCTAssertEqual(response.status, 400)
        XCTAssertEqual(try JSONValue.parse(response.body), ["error": "invalid_request", "error_description": "missing sub"])
    }

    func testTextAndJWT() {
        XCTAssertEqual(HTTPResponse.text("hi").header("Content-Type"), "text/plain; charset=utf-8")
        let jwt = HTTPResponse.jwt("a.b.c", contentType: "application/entity-statement+jwt")
        XCTAssertEqual(jwt.header("Content-Type"), "application/entity-statement+jwt")
        XCTAssertEqual(jwt.body, Array("a.b.c".utf8))
    }

    func testReplacingTheBodyKeepsHeadersPolicyAndMemoMark() {
        let head = HTTPResponse.jwt("", contentType: "application/entity-statement+jwt").applying(.publicRead).reusable(until: 9)
        let answer = head.replacingBody(Array("a.b.c".utf8))
        XCTAssertEqual(answer.body, Array("a.b.c".utf8))
        XCTAssertEqual(answer.headers.map(\.name), head.headers.map(\.name))
        XCTAssertEqual(answer.appliedPolicy, .publicRead)
        XCTAssertEqual(answer.reusableUntil, 9)
        XCTAssertEqual(answer.applying(.publicRead).headers.count, 3, "the policy is not applied twice")
    }

    func testAddingHeaderKeepsOrderAndRepeats() {
        let response = HTTPResponse(status: 200).adding(header: "Link", "<a>").adding(header: "Link", "<b>")
        XCTAssertEqual(response.headers.map(\.value), ["<a>", "<b>"])
    }

    func testHTTPErrorResponses() {
        XCTAssertEqual(HTTPError.badRequest("x").response.status, 400)
        XCTAssertEqual(HTTPError.unsupportedMediaType("x").response.status, 415)
        XCTAssertEqual(HTTPError.payloadTooLarge.response.status, 413)
    }
}
