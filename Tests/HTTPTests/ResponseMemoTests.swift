import Foundation
import HTTP
import XCTest

/// The server's micro-cache of reusable answers: what counts as the same request, and when an
/// answer must not be reused. One memo serves all worker threads; most tests run one worker all
/// the same, so that requests are answered in the order sent. An answer is kept from the second
/// time its request is answered within a second (a one-off request costs no entry), so the
/// tests ask twice before they expect reuse.
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
        configuration.memoBytes = budget
        return try startServer(configuration) { request in
            let n = counter.next()
            switch request.path {
            case "/reusable": return HTTPResponse.text("answer \(n)").reusable(until: until)
            case "/large": return HTTPResponse.text(Self.largeBody(n)).reusable(until: until)
            case "/big": return HTTPResponse.text(String(repeating: "x", count: 2000)).reusable(until: until)
            case "/missing": return HTTPResponse.error(status: 404, code: "not_found", description: "no").reusable(until: until)
            default: return .text("fresh \(n)")
            }
        }
    }

    private func body(_ port: UInt16, _ target: String, headers: String = "") throws -> String {
        try Self.body(port, target, headers: headers)
    }

    /// Static, for the client threads of the concurrent tests.
    private static func body(_ port: UInt16, _ target: String, headers: String = "") throws -> String {
        String(decoding: try roundTrip(port, "GET \(target) HTTP/1.1\r\nHost: t\r\n\(headers)\r\n").body, as: UTF8.self)
    }

    func testIdenticalRequestsReuseTheAnswer() throws {
        let counter = Counter()
        let server = try start(counter)
        defer { server.stop() }
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 1")
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 2", "a request answered once is not kept")
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 2", "the second answer is")
        let head = try roundTrip(server.boundPort, "HEAD /reusable HTTP/1.1\r\nHost: t\r\n\r\n", head: true)
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(counter.count, 2, "GET and HEAD of the same URL are answered from the memo")
    }

    func testARequestAskedOnceInASecondIsNotKept() throws {
        let counter = Counter()
        let server = try start(counter)
        defer { server.stop() }
        XCTAssertEqual(try body(server.boundPort, "/reusable?once"), "answer 1")
        Thread.sleep(forTimeInterval: 1.1)
        XCTAssertEqual(try body(server.boundPort, "/reusable?once"), "answer 2", "a second apart, each is a one-off")
        XCTAssertEqual(try body(server.boundPort, "/reusable?once"), "answer 3")
        XCTAssertEqual(try body(server.boundPort, "/reusable?once"), "answer 3")
    }

    func testAllWorkersShareOneMemo() throws {
        let counter = Counter()
        let server = try start(counter, threads: 4)
        defer { server.stop() }
        // Each request on a fresh connection, so they are spread over the workers.
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 1")
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 2")
        for _ in 0..<20 { XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 2") }
        XCTAssertEqual(counter.count, 2, "kept once, whichever worker answered")
    }

    func testConcurrentHitsFromSeveralThreads() throws {
        let counter = Counter()
        let server = try start(counter, threads: 4)
        defer { server.stop() }
        let port = server.boundPort
        _ = try body(port, "/reusable")
        XCTAssertEqual(try body(port, "/reusable"), "answer 2")
        let answers = Answers()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<25 { answers.add((try? Self.body(port, "/reusable")) ?? "failed") }
        }
        XCTAssertEqual(answers.all.count, 200)
        XCTAssertEqual(Set(answers.all), ["answer 2"], "every concurrent request got the kept answer")
        XCTAssertEqual(counter.count, 2)
    }

    /// Clearing while other threads are queueing and sending an entry's MHD response: the entry
    /// leaves the table at once, and its response is destroyed only after the last of them let
    /// go (a large body, so sends are still under way when it goes). A response destroyed too
    /// early would send freed memory or crash the server.
    func testClearWhileOtherThreadsServeTheEntry() throws {
        let counter = Counter()
        let server = try start(counter, threads: 4, budget: 8 << 20)
        defer { server.stop() }
        let port = server.boundPort
        let answers = Answers()
        let done = Counter()
        let clearer = Thread {
            while done.count == 0 {
                server.clearMemo()
                Thread.sleep(forTimeInterval: 0.002)
            }
        }
        clearer.start()
        DispatchQueue.concurrentPerform(iterations: 6) { _ in
            for _ in 0..<30 { answers.add((try? Self.body(port, "/large")) ?? "failed") }
        }
        _ = done.next()
        XCTAssertEqual(answers.all.count, 180)
        for answer in Set(answers.all) {
            let n = Int(answer.prefix(while: { $0 != " " }))
            XCTAssertTrue(n.map { answer == Self.largeBody($0) } ?? false, "a whole, unmixed answer: \(answer.prefix(40))")
        }
        XCTAssertGreaterThan(counter.count, 2, "the clears made the handler answer again")
    }

    /// A body of 256 KiB, too large for one socket write, that says which handler call made it.
    private static func largeBody(_ n: Int) -> String {
        let head = "\(n) "
        return head + String(repeating: Character(UnicodeScalar(UInt8(97 + n % 26))), count: (256 << 10) - head.utf8.count)
    }

    private final class Answers: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [String] = []
        func add(_ value: String) { lock.withLock { values.append(value) } }
        var all: [String] { lock.withLock { values } }
    }

    func testQueryAndRoutingHeadersAreDifferentRequests() throws {
        let counter = Counter()
        let server = try start(counter)
        defer { server.stop() }
        let variants = [("/reusable", ""), ("/reusable?x=1", ""), ("/reusable", "X-Forwarded-Host: other.example\r\n"),
                        ("/reusable", "X-Forwarded-Proto: https\r\n")]
        var kept: [String] = []
        for (target, headers) in variants {
            _ = try body(server.boundPort, target, headers: headers)
            kept.append(try body(server.boundPort, target, headers: headers))
        }
        XCTAssertEqual(kept, ["answer 2", "answer 4", "answer 6", "answer 8"], "each is a request of its own")
        for ((target, headers), answer) in zip(variants, kept) {
            XCTAssertEqual(try body(server.boundPort, target, headers: headers), answer)
        }
        // A header that does not route (here: Accept) does not make a request different.
        XCTAssertEqual(try body(server.boundPort, "/reusable", headers: "Accept: text/plain\r\n"), "answer 2")
    }

    func testClearAndNonReusableAnswers() throws {
        let counter = Counter()
        let server = try start(counter)
        defer { server.stop() }
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 1")
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 2")
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 2")
        server.clearMemo()
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 3", "a cleared memo answers nothing")
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 4", "and has forgotten what it was asked")
        for n in 5...7 { XCTAssertEqual(try body(server.boundPort, "/other"), "fresh \(n)", "answers not marked reusable are never reused") }
        for _ in 0..<3 { _ = try body(server.boundPort, "/missing") }
        XCTAssertEqual(counter.count, 10, "errors are never reused")
        let post = try roundTrip(server.boundPort, "POST /reusable HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n")
        XCTAssertEqual(String(decoding: post.body, as: UTF8.self), "answer 11", "POST is never answered from the memo")
    }

    func testMemoStaysWithinItsByteBudget() throws {
        let counter = Counter()
        // Room for one small entry (body, key and the 256-byte allowance), not two.
        let server = try start(counter, budget: 400)
        defer { server.stop() }
        XCTAssertEqual(try body(server.boundPort, "/reusable?a"), "answer 1")
        XCTAssertEqual(try body(server.boundPort, "/reusable?a"), "answer 2")
        XCTAssertEqual(try body(server.boundPort, "/reusable?a"), "answer 2")
        XCTAssertEqual(try body(server.boundPort, "/reusable?b"), "answer 3")
        XCTAssertEqual(try body(server.boundPort, "/reusable?b"), "answer 4", "a second entry does not fit: the memo starts over")
        XCTAssertEqual(try body(server.boundPort, "/reusable?a"), "answer 5", "so the first one was dropped")
        for _ in 0..<3 { _ = try body(server.boundPort, "/big") }
        XCTAssertEqual(counter.count, 8, "an answer larger than the budget is never kept")
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
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 2")
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 2")
        Thread.sleep(forTimeInterval: 1.1)
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 3")
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
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 5", "nor counted as asked before")
        XCTAssertEqual(try body(server.boundPort, "/reusable"), "answer 5")
        XCTAssertEqual(try body(server.boundPort, "/reusable", headers: "Authorization: Bearer x\r\n"), "answer 6",
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
        XCTAssertEqual(try body(server.boundPort, "/memo"), "memo 2")
        XCTAssertEqual(try body(server.boundPort, "/memo"), "memo 2")
        for n in 3...5 { XCTAssertEqual(try body(server.boundPort, "/plain"), "plain \(n)", "a route without memo: true is never reused") }
    }
}
