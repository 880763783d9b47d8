import HTTP
import JSON
import XCTest

/// Server-level behaviour the handler does not control: methods, CORS, default headers, logs.
final class HTTPServerProtocolTests: XCTestCase {
    /// A site with one public GET route at /x and a per-client POST route at /token.
    static let site: Site<Void> = {
        var router = Router<Void>()
        router.get("/x") { _, request, _ in echo(request) }
        router.post("/token", policy: .perClient) { _, request, _ in echo(request) }
        return Site(baseURL: "http://t", mounts: [], root: router)
    }()

    func testPutIs405WithAllow() throws {
        let server = try startServer(site: Self.site)
        defer { server.stop() }
        let response = try roundTrip(server.boundPort, "PUT /x HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}")
        XCTAssertEqual(response.status, 405)
        XCTAssertEqual(response.header("Allow"), "GET, HEAD, OPTIONS")
        XCTAssertEqual(response.header("Access-Control-Allow-Origin"), "*", "a browser must be able to read the error")
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        XCTAssertEqual(response.json?["error"], "invalid_request")
        XCTAssertNotNil(response.json?["error_description"]?.stringValue)
    }

    func testPreparedResponseServedAgainAndAgain() throws {
        let server = try startServer()
        defer { server.stop() }
        for _ in 0..<3 {
            let response = try roundTrip(server.boundPort, "GET /prepared HTTP/1.1\r\nHost: t\r\n\r\n")
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "hello")
            XCTAssertEqual(response.header("Content-Type"), "application/example")
            XCTAssertEqual(response.header("X-Kept"), "1")
            XCTAssertEqual(response.header("Access-Control-Allow-Origin"), "*")
        }
        let head = try roundTrip(server.boundPort, "HEAD /prepared HTTP/1.1\r\nHost: t\r\n\r\n", head: true)
        XCTAssertEqual(head.status, 200)
        XCTAssertTrue(head.body.isEmpty)
        // A copy changed after preparation must not serve the stale prepared bytes.
        let changed = try roundTrip(server.boundPort, "GET /prepared-changed HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(String(decoding: changed.body, as: UTF8.self), "changed")
    }

    func testDeleteIs405() throws {
        let server = try startServer(site: Self.site)
        defer { server.stop() }
        XCTAssertEqual(try roundTrip(server.boundPort, "DELETE /x HTTP/1.1\r\nHost: t\r\n\r\n").status, 405)
    }

    func testOptionsPreflight() throws {
        let server = try startServer(site: Self.site)
        defer { server.stop() }
        let refused = try roundTrip(server.boundPort, "OPTIONS /token HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(refused.status, 405, "no preflight for a per-client route")
        XCTAssertNil(refused.header("Access-Control-Allow-Origin"))
        let response = try roundTrip(
            server.boundPort,
            "OPTIONS /x HTTP/1.1\r\nHost: t\r\nOrigin: https://wallet.example\r\n"
                + "Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: content-type, dpop\r\n\r\n")
        XCTAssertEqual(response.status, 204)
        XCTAssertEqual(response.header("Access-Control-Allow-Origin"), "*")
        XCTAssertEqual(response.header("Access-Control-Allow-Methods"), "GET, HEAD, OPTIONS")
        XCTAssertEqual(response.header("Access-Control-Allow-Headers"), "Content-Type, Authorization, DPoP")
        XCTAssertEqual(response.header("Access-Control-Max-Age"), "86400")
    }

    func testCORSOnGetUnlessHandlerSetsIt() throws {
        let server = try startServer()
        defer { server.stop() }
        XCTAssertEqual(try roundTrip(server.boundPort, "GET / HTTP/1.1\r\nHost: t\r\n\r\n").header("Access-Control-Allow-Origin"), "*")
        let own = try roundTrip(server.boundPort, "GET /own-origin HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(own.headers.filter { $0.name.lowercased() == "access-control-allow-origin" }.map(\.value), ["https://wallet.example"])
    }

    func testContentTypeAlwaysPresent() throws {
        let server = try startServer()
        defer { server.stop() }
        let raw = try roundTrip(server.boundPort, "GET /no-type HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(raw.header("Content-Type"), "application/octet-stream")
        XCTAssertEqual(raw.text, "raw")
        let text = try roundTrip(server.boundPort, "GET /own-origin HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(text.header("Content-Type"), "text/plain; charset=utf-8")
    }

    func testNoCacheControlByDefault() throws {
        let server = try startServer()
        defer { server.stop() }
        XCTAssertNil(try roundTrip(server.boundPort, "GET / HTTP/1.1\r\nHost: t\r\n\r\n").header("Cache-Control"))
        XCTAssertEqual(try roundTrip(server.boundPort, "GET /no-store HTTP/1.1\r\nHost: t\r\n\r\n").header("Cache-Control"), "no-store")
    }

    func testAccessLogOmitsQueryAndHeaders() throws {
        let log = LogCapture()
        let server = try startServer(site: Self.site, log: log)
        defer { server.stop() }
        _ = try roundTrip(server.boundPort, "GET /x?code=SECRET HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer TOKEN\r\n\r\n")
        _ = try roundTrip(server.boundPort, "PUT /x HTTP/1.1\r\nHost: t\r\n\r\n")
        server.stop()
        let lines = log.lines
        XCTAssertEqual(lines.count, 2, "\(lines)")
        XCTAssertTrue(lines[0].hasPrefix("info GET /x 200 "), lines[0])
        XCTAssertTrue(lines[0].hasSuffix("ms"), lines[0])
        XCTAssertTrue(lines[1].hasPrefix("info PUT /x 405 "), lines[1])
        for line in lines {
            XCTAssertFalse(line.contains("SECRET"))
            XCTAssertFalse(line.contains("TOKEN"))
        }
    }

    func testAccessLogEscapesControlCharacters() throws {
        let log = LogCapture()
        let server = try startServer(log: log)
        defer { server.stop() }
        _ = try roundTrip(server.boundPort, "GET /a%0Afake HTTP/1.1\r\nHost: t\r\n\r\n")
        server.stop()
        XCTAssertEqual(log.lines.count, 1)
        XCTAssertTrue(log.lines[0].hasPrefix("info GET /a\\x0afake 200 "), log.lines[0])
    }

    func testCannotBindTakenPort() throws {
        let first = try startServer()
        defer { first.stop() }
        let second = HTTPServer(
            configuration: HTTPServerConfiguration(port: first.boundPort), logger: LogCapture().logger, handler: echoHandler)
        XCTAssertThrowsError(try second.start()) { error in
            XCTAssertEqual(error as? HTTPServerError, .cannotBind("127.0.0.1", first.boundPort))
        }
        let badHost = HTTPServer(
            configuration: HTTPServerConfiguration(host: "not-an-address", port: 0), logger: LogCapture().logger,
            handler: echoHandler)
        XCTAssertThrowsError(try badHost.start())
    }

    func testIPv6Loopback() throws {
        let server = try startServer(HTTPServerConfiguration(host: "::1", port: 0, threads: 1))
        defer { server.stop() }
        guard let connection = try? RawHTTPConnection(port: server.boundPort, host: "::1") else {
            throw XCTSkip("no IPv6 loopback on this machine")
        }
        connection.send("GET /v6 HTTP/1.1\r\nHost: t\r\n\r\n")
        let echo = try XCTUnwrap(connection.readResponse().json)
        XCTAssertEqual(echo["remote"], "::1")
    }

    func testConfigurationDefaults() {
        let configuration = HTTPServerConfiguration()
        XCTAssertEqual(configuration.host, "127.0.0.1")
        XCTAssertEqual(configuration.port, 8080)
        XCTAssertGreaterThanOrEqual(configuration.threads, 1)
        XCTAssertEqual(configuration.bodyLimit, 1 << 20)
        XCTAssertEqual(configuration.connectionTimeout, 30)
        XCTAssertEqual(configuration.connectionLimit, 1024)
    }

    func testLocalhostBindsLoopback() throws {
        let server = try startServer(HTTPServerConfiguration(host: "localhost", port: 0, threads: 1))
        defer { server.stop() }
        XCTAssertEqual(try roundTrip(server.boundPort, "GET / HTTP/1.1\r\nHost: t\r\n\r\n").status, 200)
    }

    func testBoundPortIsZeroWhenStopped() throws {
        let server = try startServer()
        XCTAssertNotEqual(server.boundPort, 0)
        server.stop()
        XCTAssertEqual(server.boundPort, 0)
        server.stop()  // idempotent
    }
}
