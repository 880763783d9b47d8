import XCTest
@testable import HTTP

final class AccessLogTests: XCTestCase {
    func testLongPathsAreCutAndControlCharactersEscaped() {
        let long = "/" + String(repeating: "é", count: 5000)
        let logged = AccessLog.printable(long)
        XCTAssertLessThanOrEqual(logged.utf8.count, 256 + 6, "the cut may split a character; its replacement and the ellipsis add a few bytes")
        XCTAssertTrue(logged.hasSuffix("…"))
        XCTAssertEqual(AccessLog.printable("/a\nb"), "/a\\x0ab")
    }
}
