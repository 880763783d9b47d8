@testable import WalletBench
import XCTest

final class BenchSchedulingTests: XCTestCase {
    func testPolicyParse() throws {
        XCTAssertEqual(try BenchScheduling(parsing: "batch"), .batch)
        XCTAssertEqual(try BenchScheduling(parsing: "normal"), .normal)
        for bad in ["", "BATCH", "fifo", "batch ", "idle"] {
            XCTAssertThrowsError(try BenchScheduling(parsing: bad), bad) { XCTAssertTrue("\($0)".contains("batch or normal")) }
        }
    }

    func testNormalKeepsTheDefaultPolicy() {
        XCTAssertTrue(BenchScheduling.normal.applyToCurrentThread())
    }

    func testPlainURLSplitting() {
        XCTAssertEqual(PlainURL("http://127.0.0.1:8080/pid/token?x=1#f"),
                       PlainURL(host: "127.0.0.1", port: "8080", authority: "127.0.0.1:8080", target: "/pid/token?x=1"))
        XCTAssertEqual(PlainURL("http://[::1]/a")?.host, "[::1]")
        XCTAssertEqual(PlainURL("http://h?q")?.target, "/?q")
        for other in ["https://h/a", "http://user@h/a", "http://h:99999/", "http:///a", "ftp://h/"] { XCTAssertNil(PlainURL(other), other) }
    }
}
