import XCTest
@testable import HTTP

final class AccessLogTests: XCTestCase {
    func testLineFormat() {
        XCTAssertEqual(AccessLog.line(method: "GET", path: "/ta/fetch", status: 200, bytes: 2345, elapsedNanos: 1_234_567),
                       "GET /ta/fetch 200 2345 1.234ms")
        XCTAssertEqual(AccessLog.line(method: "POST", path: "/", status: 404, bytes: 0, elapsedNanos: 52_000),
                       "POST / 404 0 0.052ms")
    }

    func testControlCharactersAreEscaped() {
        XCTAssertEqual(AccessLog.line(method: "GET", path: "/a\nb\u{7F}", status: 200, bytes: 1, elapsedNanos: 0),
                       "GET /a\\x0ab\\x7f 200 1 0.000ms")
    }

    func testLongPathsAreCutOnACharacterBoundary() {
        let long = "/" + String(repeating: "é", count: 5000)
        let line = AccessLog.line(method: "GET", path: long, status: 414, bytes: 0, elapsedNanos: 0)
        let path = line.split(separator: " ")[1]
        XCTAssertLessThanOrEqual(path.utf8.count, AccessLog.pathLimit + "…".utf8.count)
        XCTAssertTrue(path.hasSuffix("…"))
        XCTAssertFalse(path.contains("\u{FFFD}"), "a cut inside a character would leave a replacement character")
        XCTAssertTrue(line.hasSuffix(" 414 0 0.000ms"))
    }
}
