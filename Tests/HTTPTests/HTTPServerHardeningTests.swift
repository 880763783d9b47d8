import Foundation
import HTTP
import JSON
import XCTest

/// What a client cannot do to the server: take every connection from one address, or get an
/// HTTP/1.1 request without Host served; and which error answers libmicrohttpd writes itself.
final class HTTPServerHardeningTests: XCTestCase {
    /// RFC 9112 §3.2: 400 to an HTTP/1.1 request without Host, as JSON with the security headers.
    func testHTTP11WithoutHostIs400() throws {
        let server = try startServer()
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.boundPort)
        connection.send("GET /x HTTP/1.1\r\n\r\n")
        let response = try connection.readResponse()
        XCTAssertEqual(response.status, 400)
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        XCTAssertEqual(response.header("X-Content-Type-Options"), "nosniff")
        XCTAssertEqual(response.json?["error"], "invalid_request")
        XCTAssertNotNil(response.json?["error_description"]?.stringValue)
        XCTAssertTrue(connection.waitForClose())
        // With a body too: refused before it is read.
        let post = try roundTrip(server.boundPort, "POST /x HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}")
        XCTAssertEqual(post.status, 400)
        // A query gives the request a context first (a different path through the pipeline).
        XCTAssertEqual(try roundTrip(server.boundPort, "GET /x?a=b HTTP/1.1\r\n\r\n").status, 400)
    }

    func testHTTP10WithoutHostIsServed() throws {
        let server = try startServer()
        defer { server.stop() }
        XCTAssertEqual(try roundTrip(server.boundPort, "GET /x HTTP/1.0\r\n\r\n").status, 200)
        XCTAssertEqual(try roundTrip(server.boundPort, "GET /x HTTP/1.1\r\nHost: t\r\n\r\n").status, 200)
    }

    /// One address holding its share of idle connections: its next connection is closed at once
    /// without an answer, and another address is still served.
    func testOneAddressCannotTakeEveryConnection() throws {
        var configuration = HTTPServerConfiguration(port: 0, threads: 2)
        configuration.connectionLimit = 32
        configuration.perAddressConnectionLimit = 4
        let server = try startServer(configuration)
        defer { server.stop() }
        let idle = try (0..<4).map { _ in try RawHTTPConnection(port: server.boundPort, source: "127.0.0.1") }
        // The kernel completes the handshake before MHD sees the connection; give MHD the accepts.
        Thread.sleep(forTimeInterval: 0.2)
        let excess = try RawHTTPConnection(port: server.boundPort, source: "127.0.0.1")
        let started = Date()
        excess.send("GET /x HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertTrue(excess.waitForClose(), "the fifth connection from one address is closed")
        XCTAssertLessThan(Date().timeIntervalSince(started), 2, "at once, not at the connection timeout")

        let other = try RawHTTPConnection(port: server.boundPort, source: "127.0.0.2")
        other.send("GET /x HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(try other.readResponse().status, 200)
        // The idle connections still work: the cap refuses only new ones.
        idle[0].send("GET /x HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(try idle[0].readResponse().status, 200)
    }

    /// 413 is the server's own answer (JSON, security headers). 400 for a malformed request, 414
    /// and 431 are libmicrohttpd's (0.9.75): written inside the library with a fixed HTML body
    /// before any callback runs, and no option replaces them; the status and the closed
    /// connection are what a client can rely on.
    func testErrorAnswersOfTheLibrary() throws {
        let server = try startServer()
        defer { server.stop() }
        let tooLarge = try roundTrip(server.boundPort, "POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 99999999\r\n\r\n")
        XCTAssertEqual(tooLarge.status, 413)
        XCTAssertEqual(tooLarge.json?["error"], "invalid_request")
        XCTAssertEqual(tooLarge.header("X-Content-Type-Options"), "nosniff")

        let longURI = try roundTrip(server.boundPort, "GET /\(String(repeating: "a", count: 70_000)) HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(longURI.status, 414)
        let bigHeader = try roundTrip(server.boundPort, "GET /x HTTP/1.1\r\nHost: t\r\nX-A: \(String(repeating: "b", count: 70_000))\r\n\r\n")
        XCTAssertEqual(bigHeader.status, 431)
        let malformed = try roundTrip(server.boundPort, "GET /x HTTP/1.1\r\nHost: t\r\nNo colon here\r\n\r\n")
        XCTAssertEqual(malformed.status, 400)
    }
}
