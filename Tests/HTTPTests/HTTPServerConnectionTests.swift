import HTTP
import JSON
import XCTest

/// Connection reuse and concurrency.
final class HTTPServerConnectionTests: XCTestCase {
    func testKeepAliveServesTwoRequestsOnOneConnection() throws {
        let server = try startServer()
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.boundPort)
        connection.send("GET /one?x=1 HTTP/1.1\r\nHost: t\r\n\r\n")
        let first = try connection.readResponse()
        XCTAssertEqual(first.json?["path"], "/one")
        XCTAssertNotEqual(first.header("Connection")?.lowercased(), "close")
        connection.send("POST /two HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc")
        let second = try connection.readResponse()
        XCTAssertEqual(second.json?["path"], "/two")
        XCTAssertEqual(second.json?["body"], "abc")
        connection.send("GET /three HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(try connection.readResponse().json?["path"], "/three")
    }

    func testBuiltinAnswersKeepTheConnection() throws {
        let server = try startServer(site: HTTPServerProtocolTests.site)
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.boundPort)
        connection.send("OPTIONS /x HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(try connection.readResponse().status, 204)
        connection.send("DELETE /x HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(try connection.readResponse().status, 405)
        connection.send("GET /x HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(try connection.readResponse().json?["path"], "/x")
    }

    func testPipelinedRequests() throws {
        let server = try startServer()
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.boundPort)
        connection.send("GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET /b?q=2 HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(try connection.readResponse().json?["path"], "/a")
        XCTAssertEqual(try connection.readResponse().json?["query"], [["q", "2"]])
    }

    func testConcurrentRequests() throws {
        let server = try startServer(HTTPServerConfiguration(port: 0, threads: 2))
        defer { server.stop() }
        let port = server.boundPort
        let failures = LogCapture()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            do {
                let connection = try RawHTTPConnection(port: port)
                for i in 0..<50 {
                    let body = "w\(worker)-\(i)"
                    let post = i % 2 == 0
                    connection.send(
                        post
                            ? "POST /w HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                            : "GET /w?id=\(body) HTTP/1.1\r\nHost: t\r\n\r\n")
                    let echo = try connection.readResponse().json
                    let got = post ? echo?["body"] : echo?["query"]?.arrayValue?.first?.arrayValue?.last
                    if got?.stringValue != body { failures.append("worker \(worker) request \(i): \(String(describing: got))") }
                }
            } catch {
                failures.append("worker \(worker): \(error)")
            }
        }
        XCTAssertEqual(failures.lines, [])
    }

    func testManyShortConnections() throws {
        let server = try startServer()
        defer { server.stop() }
        for i in 0..<200 {
            let response = try roundTrip(server.boundPort, "GET /n?i=\(i) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            XCTAssertEqual(response.status, 200)
        }
    }

    func testHTTP10() throws {
        let server = try startServer()
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.boundPort)
        connection.send("GET /old HTTP/1.0\r\n\r\n")
        let response = try connection.readResponse()
        XCTAssertEqual(response.json?["path"], "/old")
        XCTAssertTrue(connection.waitForClose())
    }
}
