import Foundation
import HTTP
import Logging
import XCTest
@testable import Federation

/// The remote fetcher against a real local server: size limit, allow-list, redirects.
final class HTTPStatementFetcherTests: XCTestCase {
    private func serve(_ handler: @escaping HTTPHandler) throws -> (HTTPServer, String) {
        let server = HTTPServer(configuration: HTTPServerConfiguration(port: 0, threads: 2),
                                logger: Logger(label: "fetcher-test") { _ in SwiftLogNoOpLogHandler() }, handler: handler)
        try server.start()
        return (server, "http://127.0.0.1:\(server.boundPort)")
    }

    private let routes: HTTPHandler = { request in
        switch request.path {
        case "/small": return .text("a.b.c")
        case "/huge": return HTTPResponse(status: 200, body: [UInt8](repeating: 0x61, count: 3 << 20))
        case "/away": return HTTPResponse(status: 302, headers: [(name: "Location", value: "http://localhost:1/elsewhere")])
        default: return .error(status: 404, code: "not_found", description: "no")
        }
    }

    private func failure(_ body: () throws(FederationError) -> String) -> FederationError? {
        do { _ = try body(); return nil } catch { return error }
    }

    func testFetchesWithinTheLimits() throws {
        let (server, base) = try serve(routes)
        defer { server.stop() }
        XCTAssertEqual(try HTTPStatementFetcher().get(base + "/small"), "a.b.c")
    }

    func testStopsAtTheSizeLimit() throws {
        let (server, base) = try serve(routes)
        defer { server.stop() }
        let error = failure { () throws(FederationError) in try HTTPStatementFetcher(maxBytes: 1 << 20).get(base + "/huge") }
        XCTAssertEqual(error?.code, "temporarily_unavailable")
        XCTAssertTrue(error?.message.contains("larger than") == true, "\(String(describing: error))")
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
    }
}
