import Foundation
import HTTP
import JSON
import XCTest

/// Deferred answers: the connection is suspended while another thread works, so no worker
/// thread waits on another host.
final class DeferredResponseTests: XCTestCase {
    private final class Box<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [Value] = []
        func append(_ value: Value) { lock.withLock { stored.append(value) } }
        var values: [Value] { lock.withLock { stored } }
    }

    private static func site(
        parked: Box<ResponseCompletion> = Box(), calls: Box<Int> = Box()
    ) -> Site<Void> {
        var router = Router<Void>()
        router.get("/slow", policy: .perClient) { _, request, _ in
            let seconds = Double(request.parameters.pairs.first { $0.name == "s" }?.value ?? "2") ?? 2
            return .deferred { complete in
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { complete(.json(["slept": true])) }
            }
        }
        router.get("/now") { _, _, _ in .deferred { complete in complete(.text("now")) } }
        router.get("/soon") { _, _, _ in .deferred { complete in DispatchQueue.global().async { complete(.text("soon")) } } }
        router.get("/fails") { _, _, _ in
            .deferred { complete in DispatchQueue.global().async { complete.fail(HTTPError.badRequest("bad sub")) } }
        }
        router.get("/parked") { _, _, _ in .deferred { complete in parked.append(complete) } }
        router.get("/memo", memo: true) { _, _, _ in
            calls.append(1)
            return .deferred { complete in DispatchQueue.global().async { complete(.text("memo")) } }
        }
        router.get("/fast") { _, _, _ in .text("fast") }
        return Site(baseURL: "http://t", mounts: [], root: router)
    }

    private func waitUntil(_ condition: () -> Bool, seconds: Double = 5) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return condition()
    }

    func testDeferredRequestsDoNotDelayOthers() throws {
        let server = try startServer(site: Self.site(), HTTPServerConfiguration(port: 0, threads: 2))
        defer { server.stop() }
        let waiting = try (0..<8).map { _ in try RawHTTPConnection(port: server.boundPort, timeoutSeconds: 10) }
        let started = Date()
        for connection in waiting { connection.send("GET /slow?s=2 HTTP/1.1\r\nHost: t\r\n\r\n") }
        XCTAssertTrue(waitUntil { server.deferredCount == 8 }, "8 requests suspended")

        let fastStart = Date()
        let fast = try roundTrip(server.boundPort, "GET /fast HTTP/1.1\r\nHost: t\r\n\r\n")
        let fastTime = Date().timeIntervalSince(fastStart)
        XCTAssertEqual(fast.text, "fast")
        XCTAssertLessThan(fastTime, 0.1, "a plain request waited \(fastTime) s behind deferred ones")

        for connection in waiting {
            let response = try connection.readResponse()
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(response.json, ["slept": true])
            XCTAssertEqual(response.header("Cache-Control"), "no-store", "the route's policy applies to deferred answers")
            XCTAssertNil(response.header("Access-Control-Allow-Origin"))
        }
        let total = Date().timeIntervalSince(started)
        XCTAssertLessThan(total, 3.5, "the 8 deferred requests ran side by side (\(total) s)")
        XCTAssertEqual(server.deferredCount, 0)
    }

    func testCompletionsAtAnyMomentOnKeepAlive() throws {
        let server = try startServer(site: Self.site(), HTTPServerConfiguration(port: 0, threads: 2))
        defer { server.stop() }
        let connection = try RawHTTPConnection(port: server.boundPort)
        for i in 0..<100 {
            let path = ["/now", "/soon", "/fast"][i % 3]
            connection.send("GET \(path) HTTP/1.1\r\nHost: t\r\n\r\n")
            XCTAssertEqual(try connection.readResponse().text, String(path.dropFirst()))
        }
        let failed = try roundTrip(server.boundPort, "GET /fails HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(failed.status, 400)
        XCTAssertEqual(failed.json, ["error": "invalid_request", "error_description": "bad sub"])
        let head = try roundTrip(server.boundPort, "HEAD /soon HTTP/1.1\r\nHost: t\r\n\r\n", head: true)
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.header("Content-Length"), "4")
    }

    func testAccessLogOfDeferredAnswers() throws {
        let log = LogCapture()
        let server = try startServer(site: Self.site(), log: log)
        _ = try roundTrip(server.boundPort, "GET /slow?s=0.05 HTTP/1.1\r\nHost: t\r\n\r\n")
        server.stop()
        XCTAssertEqual(log.lines.count, 1, "\(log.lines)")
        XCTAssertTrue(log.lines.first?.hasPrefix("info GET /slow 200 ") == true, "\(log.lines)")
        let millis = Double(log.lines.first?.split(separator: " ").last?.dropLast(2) ?? "") ?? 0
        XCTAssertGreaterThanOrEqual(millis, 45, "the duration covers the wait")
    }

    func testDeferredAnswersFillTheMemo() throws {
        let calls = Box<Int>()
        let server = try startServer(site: Self.site(calls: calls), HTTPServerConfiguration(port: 0, threads: 1))
        defer { server.stop() }
        for _ in 0..<3 { XCTAssertEqual(try roundTrip(server.boundPort, "GET /memo HTTP/1.1\r\nHost: t\r\n\r\n").text, "memo") }
        XCTAssertEqual(calls.values.count, 2, "kept from its second answer on, as direct answers are")
    }

    func testClientGoneWhileSuspended() throws {
        let parked = Box<ResponseCompletion>()
        let server = try startServer(site: Self.site(parked: parked))
        defer { server.stop() }
        do {
            let connection = try RawHTTPConnection(port: server.boundPort)
            connection.send("GET /parked HTTP/1.1\r\nHost: t\r\n\r\n")
            XCTAssertTrue(waitUntil { parked.values.count == 1 })
        }  // closed here, while suspended
        parked.values[0](.text("late"))
        parked.values[0](.text("twice"))  // ignored
        XCTAssertTrue(waitUntil { server.deferredCount == 0 })
        XCTAssertEqual(try roundTrip(server.boundPort, "GET /fast HTTP/1.1\r\nHost: t\r\n\r\n").text, "fast")
    }

    func testStopWithSuspendedConnections() throws {
        let parked = Box<ResponseCompletion>()
        let server = try startServer(site: Self.site(parked: parked))
        let connections = try (0..<3).map { _ in try RawHTTPConnection(port: server.boundPort) }
        for connection in connections { connection.send("GET /parked HTTP/1.1\r\nHost: t\r\n\r\n") }
        XCTAssertTrue(waitUntil { parked.values.count == 3 && server.deferredCount == 3 })
        let start = Date()
        server.stop()
        XCTAssertLessThan(Date().timeIntervalSince(start), 2)
        for connection in connections {
            // MHD may send the 503 or just close; either way the client is not left hanging.
            if let response = try? connection.readResponse() { XCTAssertEqual(response.status, 503) }
        }
        for complete in parked.values { complete(.text("after stop")) }  // must not touch freed connections
    }
}
