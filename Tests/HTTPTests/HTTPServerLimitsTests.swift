import Foundation
import HTTP
import JSON
import XCTest

/// Body limits and timeouts: what protects the server from large or slow clients.
final class HTTPServerLimitsTests: XCTestCase {
    private let limited = HTTPServerConfiguration(port: 0, threads: 2, bodyLimit: 1000)

    func testDeclaredOversizedBodyIs413AndClosed() throws {
        let server = try startServer(limited)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.boundPort)
        // Only the head: the server must answer from Content-Length without waiting for the body.
        connection.send("POST /json HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 1001\r\n\r\n")
        let response = try connection.readResponse()
        XCTAssertEqual(response.status, 413)
        XCTAssertEqual(response.json, ["error": "invalid_request", "error_description": "request body exceeds 1000 bytes"])
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        XCTAssertTrue(connection.waitForClose())
    }

    func testQueryParametersOverTheLimitAre414AndClosed() throws {
        var config = limited
        config.queryParameterLimit = 3
        let server = try startServer(config)
        defer { server.stop() }
        // Empty pieces are not parameters (as in HTTPRequest.query): three, and all reach the handler.
        let served = try roundTrip(server.boundPort, "GET /x?a=1&&b=%41&a=3& HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(served.status, 200)
        XCTAssertEqual(served.json?["raw_query"], "a=1&&b=%41&a=3&")
        XCTAssertEqual(served.json?["query"], [["a", "1"], ["b", "A"], ["a", "3"]])
        let connection = try RawHTTPConnection(port: server.boundPort)
        connection.send("GET /x?a=1&b=2&c=3&d=4 HTTP/1.1\r\nHost: t\r\n\r\n")
        let refused = try connection.readResponse()
        XCTAssertEqual(refused.status, 414)
        XCTAssertEqual(refused.json, ["error": "invalid_request",
                                      "error_description": "the request target has more than 3 query parameters"])
        XCTAssertEqual(refused.header("Content-Type"), "application/json")
        XCTAssertTrue(connection.waitForClose())
    }

    /// libmicrohttpd 0.9.75 kept a record per query parameter in its 32 KiB per-connection memory;
    /// these used to fill it and hang the connection (no answer until the timeout).
    func testThousandsOfQueryParametersAreAnsweredNotHung() throws {
        var config = limited
        config.connectionTimeout = 20
        let server = try startServer(config)
        defer { server.stop() }
        for (count, value) in [(400, "1"), (3000, "1"), (90, String(repeating: "v", count: 300))] {
            let query = Array(repeating: "a=\(value)", count: count).joined(separator: "&")
            let started = Date()
            let response = try roundTrip(server.boundPort, "GET /x?\(query) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            XCTAssertLessThan(Date().timeIntervalSince(started), 2, "\(count) parameters")
            XCTAssertEqual(response.status, count > 100 ? 414 : 200, "\(count) parameters")
        }
    }

    func testHugeDeclaredLengthIs413() throws {
        let server = try startServer(limited)
        defer { server.stop() }
        let response = try roundTrip(
            server.boundPort, "POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 18446744073709551615\r\n\r\n")
        XCTAssertEqual(response.status, 413)
    }

    func testBodyAtTheLimitIsAccepted() throws {
        let server = try startServer(limited)
        defer { server.stop() }
        let body = String(repeating: "x", count: 1000)
        let response = try roundTrip(server.boundPort, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n\(body)")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.json?["body"]?.stringValue?.count, 1000)
    }

    func testChunkedOversizedBodyIs413AndClosed() throws {
        let server = try startServer(limited)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.boundPort)
        connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = String(repeating: "y", count: 400)
        for _ in 0..<5 { connection.send("190\r\n\(chunk)\r\n") }  // 0x190 = 400 bytes, 2000 in all
        connection.send("0\r\n\r\n")
        let response = try connection.readResponse()
        XCTAssertEqual(response.status, 413)
        XCTAssertEqual(response.json?["error_description"], "request body exceeds 1000 bytes")
        XCTAssertTrue(connection.waitForClose())
    }

    /// A route may read bodies over the server's limit (`Router.post(bodyLimit:)`, asked through
    /// `routeBodyLimit` only for such bodies); the server's limit stays for every other route, and
    /// past the route's own a body is 413 naming that limit, declared or chunked.
    func testARouteWithItsOwnBodyLimit() throws {
        var router = Router<String>()
        router.post("/big/{name}", policy: .perClient, bodyLimit: 3000) { _, request, _ in .json(["length": .int(Int64(request.body.count))]) }
        router.post("/small", policy: .perClient) { _, request, _ in .json(["length": .int(Int64(request.body.count))]) }
        let site = Site(baseURL: "http://t", mounts: [Site.Mount(url: "http://t/wp", context: "wp", routers: [router])])
        let server = HTTPServer(configuration: limited, logger: LogCapture().logger, routeBodyLimit: { site.bodyLimit(for: $0) }) {
            site.respond(to: $0)
        }
        try server.start()
        defer { server.stop() }
        func post(_ path: String, _ count: Int) throws -> RawResponse {
            try roundTrip(server.boundPort, "POST \(path) HTTP/1.1\r\nHost: t\r\nContent-Length: \(count)\r\nConnection: close\r\n\r\n"
                          + String(repeating: "b", count: count))
        }
        XCTAssertEqual(try post("/wp/big/x", 3000).json?["length"], 3000)
        XCTAssertEqual(try post("/wp/big/x", 3001).json?["error_description"], "request body exceeds 3000 bytes")
        XCTAssertEqual(try post("/wp/small", 1001).json?["error_description"], "request body exceeds 1000 bytes")
        XCTAssertEqual(try post("/elsewhere", 1001).status, 413)

        let connection = try RawHTTPConnection(port: server.boundPort)
        connection.send("POST /wp/big/x HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in 0..<5 { connection.send("190\r\n\(String(repeating: "c", count: 400))\r\n") }  // 2000 bytes
        connection.send("0\r\n\r\n")
        XCTAssertEqual(try connection.readResponse().json?["length"], 2000)
        connection.send("POST /wp/big/x HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in 0..<8 { connection.send("190\r\n\(String(repeating: "c", count: 400))\r\n") }  // 3200 bytes
        connection.send("0\r\n\r\n")
        let refused = try connection.readResponse()
        XCTAssertEqual(refused.status, 413)
        XCTAssertEqual(refused.json?["error_description"], "request body exceeds 3000 bytes")
    }

    func testEndlessChunkedBodyIsCutOff() throws {
        let server = try startServer(limited)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.boundPort)
        connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = Array("100000\r\n".utf8) + [UInt8](repeating: UInt8(ascii: "z"), count: 1 << 20) + Array("\r\n".utf8)
        var sentMiB = 0
        while sentMiB < 64, connection.send(chunk) { sentMiB += 1 }
        XCTAssertLessThan(sentMiB, 64, "the server kept reading an endless body")
        XCTAssertTrue(connection.waitForClose())
    }

    func testExpectContinueOversizedIsRejectedBeforeBody() throws {
        let server = try startServer(limited)
        defer { server.stop() }
        let response = try roundTrip(
            server.boundPort, "POST /x HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n")
        XCTAssertEqual(response.status, 413)
    }

    func testSlowClientIsDropped() throws {
        let server = try startServer(HTTPServerConfiguration(port: 0, threads: 2, connectionTimeout: 1))
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.boundPort, timeoutSeconds: 5)
        connection.send("GET /slow HTTP/1.1\r\nHost: t\r\n")  // headers never finished
        let started = Date()
        XCTAssertTrue(connection.waitForClose())
        let waited = Date().timeIntervalSince(started)
        XCTAssertLessThan(waited, 4.5, "dropped only after \(waited) s")
    }

    func testIdleKeepAliveConnectionIsDropped() throws {
        let server = try startServer(HTTPServerConfiguration(port: 0, threads: 2, connectionTimeout: 1))
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.boundPort, timeoutSeconds: 5)
        connection.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(try connection.readResponse().status, 200)
        XCTAssertTrue(connection.waitForClose())
    }
}
