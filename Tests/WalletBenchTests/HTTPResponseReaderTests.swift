#if canImport(Glibc)
import Glibc
#endif
import Wallet
@testable import WalletBench
import XCTest

/// The load client's HTTP/1.1 response reader (RFC 9112), fed through a socket pair.
final class HTTPResponseReaderTests: XCTestCase {
    private var sockets: [Int32] = [-1, -1]

    override func setUp() {
        #if canImport(Glibc)
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &sockets), 0)
        #endif
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(sockets[0], SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    override func tearDown() {
        for fd in sockets where fd >= 0 { close(fd) }
    }

    private func serve(_ text: String, thenClose: Bool = false) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(sockets[1], $0.baseAddress, $0.count) }
        if thenClose {
            close(sockets[1])
            sockets[1] = -1
        }
    }

    private func reader(maximumBytes: Int = 1 << 20) -> HTTPResponseReader {
        HTTPResponseReader(authority: "127.0.0.1:1", timeoutSeconds: 2, maximumBytes: maximumBytes, interesting: ["Content-Type", "DPoP-Nonce"])
    }

    func testContentLengthAndKeepAlive() throws {
        serve("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDPoP-Nonce: n1\r\nX-Other: y\r\nContent-Length: 7\r\n\r\n{\"a\":1}"
              + "HTTP/1.1 204 No Content\r\n\r\n")
        let r = reader()
        let (first, keepAlive) = try r.read(from: sockets[0], method: "POST")
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(first.body, Array("{\"a\":1}".utf8))
        XCTAssertEqual(first.headers["content-type"], "application/json")
        XCTAssertEqual(first.headers["dpop-nonce"], "n1")
        XCTAssertNil(first.headers["x-other"], "only the headers asked for are kept")
        XCTAssertTrue(keepAlive)
        // The next response on the same connection.
        let (second, again) = try r.read(from: sockets[0], method: "GET")
        XCTAssertEqual(second.status, 204)
        XCTAssertEqual(second.body, [])
        XCTAssertTrue(again)
    }

    func testChunkedBodyWithExtensionsAndTrailers() throws {
        serve("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nWiki\r\n6\r\npedia \r\nE\r\nin \r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\n")
        let (response, keepAlive) = try reader().read(from: sockets[0], method: "GET")
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "Wikipedia in \r\n\r\nchunks.")
        XCTAssertTrue(keepAlive)
    }

    func testConnectionCloseAndHTTP10EndTheConnection() throws {
        serve("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
        XCTAssertFalse(try reader().read(from: sockets[0], method: "GET").keepAlive)
        tearDown(); setUp()
        serve("HTTP/1.0 200 OK\r\n\r\nuntil the end", thenClose: true)
        let (response, keepAlive) = try reader().read(from: sockets[0], method: "GET")
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "until the end")
        XCTAssertFalse(keepAlive)
    }

    func testMalformedResponsesAreRefused() throws {
        let bad = [
            "HTTP/2 200 OK\r\n\r\n",                                          // not HTTP/1.x
            "HTTP/1.1 20 OK\r\n\r\n",                                         // two-digit status
            "garbage\r\n\r\n",
            "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",     // bad chunk size
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n0\r\n\r\n",  // chunk without CRLF
            "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",           // closed mid-body
        ]
        for text in bad {
            tearDown(); setUp()
            serve(text, thenClose: true)
            XCTAssertThrowsError(try reader().read(from: sockets[0], method: "GET"), text)
        }
    }

    func testOversizedBodyIsRefused() throws {
        serve("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + String(repeating: "x", count: 100))
        XCTAssertThrowsError(try reader(maximumBytes: 10).read(from: sockets[0], method: "GET")) {
            XCTAssertTrue("\($0)".contains("larger than 10 bytes"), "\($0)")
        }
    }

    func testAClosedIdleConnectionIsToldApart() throws {
        serve("", thenClose: true)
        XCTAssertThrowsError(try reader().read(from: sockets[0], method: "GET")) {
            XCTAssertEqual($0 as? HTTPResponseReader.ConnectionClosed, .beforeResponse)
        }
    }
}
