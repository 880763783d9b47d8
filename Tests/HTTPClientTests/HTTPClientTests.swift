import HTTPClient
import XCTest

final class HTTPClientTests: XCTestCase {
    func testOnlyHTTPAndHTTPSAreSpoken() throws {
        let client = try HTTPClient(timeout: 2, maxBytes: 1024)
        for url in ["file:///etc/passwd", "ftp://127.0.0.1/", "gopher://127.0.0.1/"] {
            XCTAssertThrowsError(try client.get(url), url) {
                guard case HTTPClient.Failure.failed = $0 else { return XCTFail("\(url): \($0)") }
            }
        }
    }

    func testARefusedConnectionIsAFailureNotATimeout() throws {
        // Port 1 on loopback: nothing listens there.
        XCTAssertThrowsError(try HTTPClient(timeout: 2, maxBytes: 1024).get("http://127.0.0.1:1/")) {
            guard case HTTPClient.Failure.failed = $0 else { return XCTFail("\($0)") }
        }
    }

    func testHeaderFieldsKeepTheFirstValue() {
        var fields = HeaderFields()
        fields.add("dpop-nonce", "a")
        fields.add("dpop-nonce", "b")
        XCTAssertEqual(fields["dpop-nonce"], "a")
        XCTAssertNil(fields["location"])
    }
}
