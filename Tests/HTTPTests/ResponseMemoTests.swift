import Foundation
import HTTP
import XCTest

/// The server's micro-cache of reusable answers: what counts as the same request, and when an
/// answer must not be reused. Each worker thread keeps its own memo, so most tests run one
/// worker to count handler calls exactly.
final class ResponseMemoTests: XCTestCase {
    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func next() -> Int { lock.withLock { value += 1; return value } }
        var count: Int { lock.withLock { value } }
    }

    private func start(
        _ counter: Counter, until: Int64 = Int64(Date().timeIntervalSince1970) + 3600, threads: Int = 1, budget: Int = 1 << 20
    ) throws -> HTTPServer {
        var configuration = HTTPServerConfiguration(port: 0, threads: threads)
        configuration.memoBytesPerThread = budget
        return try startServer(configuration) { request in
            let n = counter.next()
            switch request.path {
            case "/reusable": return HTTPResponse.text("answer \(n)").reusable(until: until)
            case "/big": return HTTPResponse.text(String(repeating: "x", count: 2000)).reusable(until: until)
            case "/missing": return HTTPResponse.error(status: 404, code: "not_found", description: "no").reusable(until: until)
            default: return .text("fresh \(n)")
            }
        }
    }

    private func body(_ port: UInt16, _ target: String, headers: String = "") throws -> String {
        String(decoding: try roundTrip(port, "GET \(target) HTTP/1.1\r\nHost: t\r\n\(headers)\r\n").body, as: UTF8.self)
    }

    func testIdenticalRequestsReuseTheAnswer() throws {
        let counter = Counter()
        let server = try start(counter)
        defer { server.stop() }
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 1")
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 1")
        let head = try roundTrip(server.boundPort, "HEAD /reusable HTTP/1.1\r\nHost: t\r\n\r\n", head: true)
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(counter.count, 1, "GET and HEAD of the same URL are answered from the memo")
    }

    func testEveryWorkerHandlesAtMostOnce() throws {
        let counter = Counter()
        let server = try start(counter, threads: 2)
        defer { server.stop() }
        for _ in 0..<20 { XCTAssertTrue(try body(server.boundPort, "/reusable").hasPrefix("answer ")) }
        XCTAssertLessThanOrEqual(counter.count, 2, "one handler call per worker thread at most")
    }

    func testQueryAndRoutingHeadersAreDifferentRequests() throws {
        let counter = Counter()
        let server = try start(counter)
        defer { server.stop() }
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 1")
        XCTAssertEqual(try body(server.boundPort, "/reusable?x=1"), "answer 2")
        XCTAssertEqual(try body(server.boundPort, "/reusable", headers: "X-Forwarded-Host: other.example\r\n"), "answer 3")
        XCTAssertEqual(try body(server.boundPort, "/reusable", headers: "X-Forwarded-Proto: https\r\n"), "answer 4")
        XCTAssertEqual(try body(server.boundPort, "/reusable?x=1"), "answer 2")
        // A header that does not route (here: Accept) does not make a request different.
        XCTAssertEqual(try body(server.boundPort, "/reusable", headers: "Accept: text/plain\r\n"), "answer 1")
    }

    func testClearAndNonReusableAnswers() throws {
        let counter = Counter()
        let server = try start(counter)
        defer { server.stop() }
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 1")
        server.clearMemo()
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 2", "a cleared memo answers nothing")
        XCTAssertEqual(try body(server.boundPort, "/other"), "fresh 3")
        XCTAssertEqual(try body(server.boundPort, "/other"), "fresh 4", "answers not marked reusable are never reused")
        _ = try body(server.boundPort, "/missing")
        _ = try body(server.boundPort, "/missing")
        XCTAssertEqual(counter.count, 6, "errors are never reused")
        let post = try roundTrip(server.boundPort, "POST /reusable HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n")
        XCTAssertEqual(String(decoding: post.body, as: UTF8.self), "answer 7", "POST is never answered from the memo")
    }

    func testMemoStaysWithinItsByteBudget() throws {
        let counter = Counter()
        // Room for one small entry (body, key and the 256-byte allowance), not two.
        let server = try start(counter, budget: 400)
        defer { server.stop() }
        XCTAssertEqual(try body(server.boundPort, "/reusable?a"), "answer 1")
        XCTAssertEqual(try body(server.boundPort, "/reusable?a"), "answer 1")
        XCTAssertEqual(try body(server.boundPort, "/reusable?b"), "answer 2", "a second entry does not fit: the memo starts over")
        XCTAssertEqual(try body(server.boundPort, "/reusable?a"), "answer 3", "so the first one was dropped")
        _ = try body(server.boundPort, "/big")
        _ = try body(server.boundPort, "/big")
        XCTAssertEqual(counter.count, 5, "an answer larger than the budget is never kept")
    }

    func testExpiredAnswersAreNotReused() throws {
        let counter = Counter()
        let server = try start(counter, until: Int64(Date().timeIntervalSince1970) - 1)
        defer { server.stop() }
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 1")
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 2", "an answer past its `until` is handled anew")
    }

    func testReuseEndsAfterASecond() throws {
        let counter = Counter()
        let server = try start(counter)
        defer { server.stop() }
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 1")
        Thread.sleep(forTimeInterval: 1.1)
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 2")
    }

    func testRequestsWithCredentialsNeitherReadNorFillTheMemo() throws {
        let counter = Counter()
        let server = try start(counter)
        defer { server.stop() }
        for header in ["Authorization: Bearer x\r\n", "DPoP: a.b.c\r\n", "cookie: s=1\r\n"] {
            XCTAssertTrue(try body(server.boundPort, "/reusable", headers: header).hasPrefix("answer "))
        }
        XCTAssertEqual(counter.count, 3, "each request with credentials was handled")
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 4", "and none of them filled the memo")
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 4")
        XCTAssertEqual(try body(server.boundPort, "/reusable", headers: "Authorization: Bearer x\r\n"), "answer 5",
                       "a memo entry is not served to a request with credentials")
    }

    func testOnlyRoutesThatOptInAreMemoized() throws {
        let counter = Counter()
        var router = Router<Void>()
        router.get("/memo", memo: true) { _, _, _ in .text("memo \(counter.next())") }
        router.get("/plain") { _, _, _ in HTTPResponse.text("plain \(counter.next())").reusable(until: .max) }
        let site = Site<Void>(baseURL: "http://t", mounts: [], root: router)
        let server = try startServer(site: site, HTTPServerConfiguration(port: 0, threads: 1))
        defer { server.stop() }
        XCTAssertEqual(try body(server.boundPort, "/memo"), "memo 1")
        XCTAssertEqual(try body(server.boundPort, "/memo"), "memo 1")
        XCTAssertEqual(try body(server.boundPort, "/plain"), "plain 2")
        XCTAssertEqual(try body(server.boundPort, "/plain"), "plain 3", "a route without memo: true is never reused")
    }
}
