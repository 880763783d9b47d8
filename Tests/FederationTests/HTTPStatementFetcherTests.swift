import Foundation
import HTTP
import Logging
import Support
import XCTest
@testable import Federation

/// The remote fetcher against a real local server: size limit, allow-list, redirects, per-origin cap, deadlines.
final class HTTPStatementFetcherTests: XCTestCase {
    private func serve(threads: Int = 2, _ handler: @escaping HTTPHandler) throws -> (HTTPServer, String) {
        let server = HTTPServer(configuration: HTTPServerConfiguration(port: 0, threads: threads),
                                logger: Logger(label: "fetcher-test") { _ in SwiftLogNoOpLogHandler() }, handler: handler)
        try server.start()
        return (server, "http://127.0.0.1:\(server.boundPort)")
    }

    private let routes: HTTPHandler = { request in
        switch request.path {
        case "/small": return .text("a.b.c")
        case "/huge": return HTTPResponse(status: 200, body: [UInt8](repeating: 0x61, count: 3 << 20))
        case "/away": return HTTPResponse(status: 302, headers: [(name: "Location", value: "http://localhost:1/elsewhere")])
        case "/near": return HTTPResponse(status: 302, headers: [(name: "Location", value: "/small")])
        default: return .error(status: 404, code: "not_found", description: "no")
        }
    }

    private func failure(_ body: () throws(FederationError) -> String) -> FederationError? {
        do { _ = try body(); return nil } catch { return error }
    }

    func testFetchesWithinTheLimits() throws {
        let (server, base) = try serve(routes)
        defer { server.stop() }
        XCTAssertEqual(try HTTPStatementFetcher.allowingEverything().get(base + "/small"), "a.b.c")
    }

    func testStopsAtTheSizeLimit() throws {
        let (server, base) = try serve(routes)
        defer { server.stop() }
        let error = failure { () throws(FederationError) in try HTTPStatementFetcher.allowingEverything(maxBytes: 1 << 20).get(base + "/huge") }
        XCTAssertEqual(error?.code, "temporarily_unavailable")
        XCTAssertTrue(error?.message.contains("larger than") == true, "\(String(describing: error))")
    }

    func testDenyByDefaultWithoutConnecting() throws {
        let hits = Locked(0)
        let (server, base) = try serve { _ in hits.withLock { $0 += 1 }; return .text("x") }
        defer { server.stop() }
        let refused = failure { () throws(FederationError) in try HTTPStatementFetcher().get(base + "/small") }
        XCTAssertEqual(refused?.code, "invalid_request")
        XCTAssertEqual(hits.current, 0, "a refused URL makes no connection")
    }

    func testOriginsCompareCaseInsensitivelyWithDefaultPorts() {
        let list = FetchAllowList(origins: ["HTTPS://A.Example", "http://b.example:8080"], prefixes: ["https://c.example/fed/", "https://d.example"])
        XCTAssertTrue(list.allows("https://a.example:443/x"))
        XCTAssertTrue(list.allows("https://A.EXAMPLE/.well-known/openid-federation"))
        XCTAssertFalse(list.allows("http://a.example/x"), "scheme is part of the origin")
        XCTAssertTrue(list.allows("http://B.example:8080/"))
        XCTAssertFalse(list.allows("http://b.example/"))
        XCTAssertTrue(list.allows("https://c.example/fed/leaf"))
        XCTAssertFalse(list.allows("https://c.example/other"))
        XCTAssertTrue(list.allows("https://d.example:443/any"), "a bare-origin prefix is an origin")
        XCTAssertFalse(list.allows("https://d.example.evil.example/"), "and cannot match a longer host name")
        XCTAssertFalse(list.allows("ftp://a.example/"))
        XCTAssertTrue(FetchAllowList.everything.allows("https://anything.example/"))
        XCTAssertFalse(FetchAllowList.everything.allows("file:///etc/passwd"))
    }

    func testAllowListRefusesOtherURLsAndRedirectsOutOfIt() throws {
        let (server, base) = try serve(routes)
        defer { server.stop() }
        let fetcher = HTTPStatementFetcher(allowedPrefixes: [base + "/"])
        XCTAssertEqual(try fetcher.get(base + "/small"), "a.b.c")
        let refused = failure { () throws(FederationError) in try fetcher.get("http://localhost:\(server.boundPort)/small") }
        XCTAssertEqual(refused?.code, "invalid_request")
        XCTAssertTrue(refused?.message.contains("--fetch-allow") == true, "\(String(describing: refused))")
        // The redirect target is outside the list: it is not followed, and the 302 is no statement.
        let redirected = failure { () throws(FederationError) in try fetcher.get(base + "/away") }
        XCTAssertEqual(redirected?.code, "not_found", "\(String(describing: redirected))")
        // A redirect that stays inside the list is followed.
        XCTAssertEqual(try HTTPStatementFetcher(allowedOrigins: [base]).get(base + "/near"), "a.b.c")
    }

    func testConcurrentFetchesPerOriginAreCapped() throws {
        let state = Locked((running: 0, peak: 0))
        let (server, base) = try serve(threads: 8) { _ in
            state.withLock { $0.running += 1; $0.peak = max($0.peak, $0.running) }
            Thread.sleep(forTimeInterval: 0.15)
            state.withLock { $0.running -= 1 }
            return .text("ok")
        }
        defer { server.stop() }
        let fetcher = HTTPStatementFetcher(allowedOrigins: [base], maxConcurrentPerOrigin: 2)
        let results = Locked([String]())
        DispatchQueue.concurrentPerform(iterations: 6) { i in
            let r = (try? fetcher.get(base + "/x\(i)", deadline: .after(seconds: 5))) ?? "failed"
            results.withLock { $0.append(r) }
        }
        XCTAssertEqual(results.current, Array(repeating: "ok", count: 6))
        XCTAssertEqual(state.current.peak, 2, "never more than 2 at once against one origin")
    }

    func testWaitingForASlotCountsAgainstTheDeadline() throws {
        let hits = Locked(0)
        let (server, base) = try serve(threads: 4) { _ in
            hits.withLock { $0 += 1 }
            Thread.sleep(forTimeInterval: 0.6)
            return .text("slow")
        }
        defer { server.stop() }
        let fetcher = HTTPStatementFetcher(allowedOrigins: [base], maxConcurrentPerOrigin: 1)
        let first = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { _ = try? fetcher.get(base + "/a", deadline: .after(seconds: 5)); first.signal() }
        // The first fetch holds the slot once the server has its request (a fixed pause lost
        // the race on a loaded machine).
        let arrival = Date()
        while hits.current == 0, Date().timeIntervalSince(arrival) < 5 { Thread.sleep(forTimeInterval: 0.005) }
        let start = Date()
        let error = failure { () throws(FederationError) in try fetcher.get(base + "/b", deadline: .after(seconds: 0.2)) }
        XCTAssertEqual(error?.code, "temporarily_unavailable")
        XCTAssertLessThan(Date().timeIntervalSince(start), 0.45)
        first.wait()
        XCTAssertEqual(hits.current, 1, "the second fetch never connected")
        // A passed deadline fails at once.
        XCTAssertEqual(failure { () throws(FederationError) in try fetcher.get(base + "/c", deadline: .after(seconds: 0)) }?.code, "temporarily_unavailable")
    }
}
