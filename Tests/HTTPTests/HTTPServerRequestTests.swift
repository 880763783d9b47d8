import HTTP
import JSON
import XCTest

/// Requests through a real server: what handlers receive and what clients get back.
final class HTTPServerRequestTests: XCTestCase {
    func testGetWithQuery() throws {
        let server = try startServer()
        defer { server.stop() }
        let response = try roundTrip(
            server.boundPort,
            "GET /some%20path/x?a=1&b=two+words&a=%C3%A9%26&flag HTTP/1.1\r\nHost: t\r\nX-Custom: Yes\r\n\r\n")
        XCTAssertEqual(response.status, 200)
        let echo = try XCTUnwrap(response.json)
        XCTAssertEqual(echo["method"], "GET")
        XCTAssertEqual(echo["path"], "/some path/x")
        XCTAssertEqual(echo["raw_query"], "a=1&b=two+words&a=%C3%A9%26&flag")
        XCTAssertEqual(echo["query"], [["a", "1"], ["b", "two words"], ["a", "é&"], ["flag", ""]])
        XCTAssertEqual(echo["headers"]?["x-custom"], "Yes")
        XCTAssertEqual(echo["headers"]?["host"], "t")
        XCTAssertEqual(echo["remote"], "127.0.0.1")
        XCTAssertEqual(response.header("Content-Type"), "application/json")
    }

    func testEmptyQueryIsKept() throws {
        let server = try startServer()
        defer { server.stop() }
        let echo = try XCTUnwrap(roundTrip(server.boundPort, "GET /p? HTTP/1.1\r\nHost: t\r\n\r\n").json)
        XCTAssertEqual(echo["raw_query"], "")
        let none = try XCTUnwrap(roundTrip(server.boundPort, "GET /p HTTP/1.1\r\nHost: t\r\n\r\n").json)
        XCTAssertEqual(none["raw_query"], .null)
    }

    func testHeadHasGetHeadersButNoBody() throws {
        let server = try startServer()
        defer { server.stop() }
        let get = try roundTrip(server.boundPort, "GET /no-store HTTP/1.1\r\nHost: t\r\n\r\n")
        let connection = try RawHTTPConnection(port: server.boundPort)
        connection.send("HEAD /no-store HTTP/1.1\r\nHost: t\r\n\r\n")
        let head = try connection.readResponse(head: true)
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.header("Content-Type"), "application/json")
        XCTAssertEqual(head.header("Access-Control-Allow-Origin"), "*")
        XCTAssertEqual(head.header("Cache-Control"), "no-store")
        XCTAssertEqual(get.header("Content-Length"), "11")
        XCTAssertEqual(head.header("Content-Length"), get.header("Content-Length"))
        // No body bytes follow: the next response on the connection parses cleanly.
        connection.send("GET /after HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(try connection.readResponse().json?["path"], "/after")
    }

    func testPostForm() throws {
        let server = try startServer()
        defer { server.stop() }
        let body = "grant_type=authorization_code&code=a%2Bb+c&scope=x&scope=y"
        let response = try roundTrip(
            server.boundPort,
            "POST /form HTTP/1.1\r\nHost: t\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(
            response.json,
            [["grant_type", "authorization_code"], ["code", "a+b c"], ["scope", "x"], ["scope", "y"]])
        XCTAssertEqual(response.header("Access-Control-Allow-Origin"), "*", "a browser wallet must be able to read POST results")
    }

    func testPostJSON() throws {
        let server = try startServer()
        defer { server.stop() }
        let body = #"{"proof":{"jwt":"a.b.c"},"n":[1,2]}"#
        let response = try roundTrip(
            server.boundPort,
            "POST /json HTTP/1.1\r\nHost: t\r\nContent-Type: application/json; charset=utf-8\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.json, ["received": ["proof": ["jwt": "a.b.c"], "n": [1, 2]]])
    }

    func testPostJSONWithWrongTypeIs415() throws {
        let server = try startServer()
        defer { server.stop() }
        let response = try roundTrip(
            server.boundPort, "POST /json HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}")
        XCTAssertEqual(response.status, 415)
        XCTAssertEqual(response.json?["error"], "invalid_request")
    }

    func testChunkedPostBodyIsAssembled() throws {
        let server = try startServer()
        defer { server.stop() }
        let response = try roundTrip(
            server.boundPort,
            "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
        XCTAssertEqual(response.json?["body"], "hello world")
    }

    func testPostWithQueryAndEmptyBody() throws {
        let server = try startServer()
        defer { server.stop() }
        let echo = try XCTUnwrap(
            roundTrip(server.boundPort, "POST /p?x=1 HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n").json)
        XCTAssertEqual(echo["method"], "POST")
        XCTAssertEqual(echo["query"], [["x", "1"]])
        XCTAssertEqual(echo["body"], "")
    }

    func testEncodedNULDoesNotTruncateThePath() throws {
        let server = try startServer()
        defer { server.stop() }
        let echo = try XCTUnwrap(roundTrip(server.boundPort, "GET /admin%00/../public%2Fx HTTP/1.1\r\nHost: t\r\n\r\n").json)
        XCTAssertEqual(echo["path"], "/admin%00/../public/x")
    }

    func testRepeatedHeadersAreJoined() throws {
        let server = try startServer()
        defer { server.stop() }
        let echo = try XCTUnwrap(
            roundTrip(server.boundPort, "GET / HTTP/1.1\r\nHost: t\r\nAccept: a/b\r\nACCEPT: c/d\r\n\r\n").json)
        XCTAssertEqual(echo["headers"]?["accept"], "a/b, c/d")
    }
}
