@testable import Federation
import Support
import Foundation
import HTTP
import JSON
import XCTest

final class TrustMarkEndpointsTests: XCTestCase {
    typealias F = FederationFixture
    let start: Int64 = 1_700_000_000

    private func query(_ pairs: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return pairs.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&")
    }

    private func get(_ path: String, _ pairs: [(String, String)] = []) -> HTTPRequest {
        HTTPRequest(method: "GET", path: path, rawQuery: query(pairs))
    }

    private func form(_ pairs: [(String, String)], method: String = "POST",
                      contentType: String = "application/x-www-form-urlencoded") -> HTTPRequest {
        HTTPRequest(method: method, path: "/trust-mark-status", headers: ["Content-Type": contentType], body: Array(query(pairs).utf8))
    }

    private func assertError(_ response: HTTPResponse, _ status: Int, _ code: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, status, file: file, line: line)
        XCTAssertEqual(response.header("Content-Type"), "application/json", file: file, line: line)
        let body = try? JSONValue.parse(response.body)
        XCTAssertEqual(body?["error"], .string(code), file: file, line: line)
        XCTAssertNotNil(body?["error_description"]?.stringValue, file: file, line: line)
    }

    func testTrustMarkEndpoint() throws {
        let (host, _, _) = try F.demo(clock: ManualClock(start))
        let ok = host.handleTrustMark(F.trustAnchor, get("/trust-mark", [("trust_mark_type", F.basicMark), ("sub", F.pidProvider)]))
        XCTAssertEqual(ok.status, 200)
        XCTAssertEqual(ok.header("Content-Type"), "application/trust-mark+jwt")
        XCTAssertEqual(String(decoding: ok.body, as: UTF8.self),
                       try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider))

        assertError(host.handleTrustMark(F.trustAnchor, get("/trust-mark", [("trust_mark_type", F.basicMark)])), 400, "invalid_request")
        assertError(host.handleTrustMark(F.trustAnchor, get("/trust-mark", [("sub", F.pidProvider)])), 400, "invalid_request")
        assertError(host.handleTrustMark(F.trustAnchor, get("/trust-mark", [
            ("trust_mark_type", F.basicMark), ("sub", F.pidProvider), ("sub", F.relyingParty),
        ])), 400, "invalid_request")
        assertError(host.handleTrustMark(F.trustAnchor, get("/trust-mark", [
            ("trust_mark_type", F.basicMark), ("trust_mark_type", F.basicMark), ("sub", F.pidProvider),
        ])), 400, "invalid_request")
        assertError(host.handleTrustMark(F.trustAnchor, get("/trust-mark", [("trust_mark_type", F.basicMark), ("sub", F.relyingParty)])),
                    404, "not_found")
    }

    func testTrustMarkStatusEndpoint() throws {
        let (host, _, _) = try F.demo(clock: ManualClock(start))
        let mark = try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        let ok = host.handleTrustMarkStatus(F.trustAnchor, form([("trust_mark", mark)]))
        XCTAssertEqual(ok.status, 200)
        XCTAssertEqual(ok.header("Content-Type"), "application/trust-mark-status-response+jwt")
        XCTAssertEqual(try F.decode(String(decoding: ok.body, as: UTF8.self)).claims["status"], "active")

        let invalid = host.handleTrustMarkStatus(F.trustAnchor, form([("trust_mark", "garbage")]))
        XCTAssertEqual(invalid.status, 200, "a broken mark is reported, not refused")
        XCTAssertEqual(try F.decode(String(decoding: invalid.body, as: UTF8.self)).claims["status"], "invalid")

        assertError(host.handleTrustMarkStatus(F.trustAnchor, form([])), 400, "invalid_request")
        assertError(host.handleTrustMarkStatus(F.trustAnchor, form([("trust_mark", "")])), 400, "invalid_request")
        assertError(host.handleTrustMarkStatus(F.trustAnchor, form([("trust_mark", mark), ("trust_mark", mark)])), 400, "invalid_request")
        assertError(host.handleTrustMarkStatus(F.trustAnchor, form([("trust_mark", mark)], contentType: "application/json")),
                    400, "invalid_request")
        assertError(host.handleTrustMarkStatus(F.trustAnchor, get("/trust-mark-status", [("trust_mark", mark)])), 400, "invalid_request")

        let foreign = try F.tampered(mark) { $0["iss"] = .string(F.intermediate) }
        assertError(host.handleTrustMarkStatus(F.trustAnchor, form([("trust_mark", foreign)])), 404, "not_found")
    }

    func testTrustMarkListEndpoint() throws {
        let (host, _, _) = try F.demo(clock: ManualClock(start))
        let all = host.handleTrustMarkList(F.trustAnchor, get("/trust-mark-list", [("trust_mark_type", F.basicMark)]))
        XCTAssertEqual(all.status, 200)
        XCTAssertEqual(all.header("Content-Type"), "application/json")
        XCTAssertEqual(try JSONValue.parse(all.body), [.string(F.pidProvider)])
        let one = host.handleTrustMarkList(F.trustAnchor, get("/trust-mark-list", [("trust_mark_type", F.basicMark), ("sub", F.relyingParty)]))
        XCTAssertEqual(try JSONValue.parse(one.body), [])

        assertError(host.handleTrustMarkList(F.trustAnchor, get("/trust-mark-list")), 400, "invalid_request")
        assertError(host.handleTrustMarkList(F.trustAnchor, get("/trust-mark-list", [
            ("trust_mark_type", F.basicMark), ("sub", F.pidProvider), ("sub", F.relyingParty),
        ])), 400, "invalid_request")
        assertError(host.handleTrustMarkList(F.trustAnchor, get("/trust-mark-list", [("trust_mark_type", F.base + "/marks/unknown")])),
                    404, "not_found")
    }

    func testHistoricalKeysEndpoint() throws {
        let (host, _, _) = try F.demo(clock: ManualClock(start))
        let response = host.handleHistoricalKeys(F.pidProvider, get("/historical-keys"))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Content-Type"), "application/jwk-set+jwt")
        XCTAssertEqual(try F.decode(String(decoding: response.body, as: UTF8.self)).claims["iss"], .string(F.pidProvider))
    }

    /// The endpoints are mounted for issuers only (historical keys for everyone).
    func testRouting() throws {
        let (host, _, _) = try F.demo(clock: ManualClock(start))
        let request = get("/trust-mark", [("trust_mark_type", F.basicMark), ("sub", F.pidProvider)])
        XCTAssertEqual(host.handle(entityID: F.trustAnchor, path: "/trust-mark", request: request)?.status, 200)
        XCTAssertNil(host.handle(entityID: F.intermediate, path: "/trust-mark", request: request))
        XCTAssertEqual(host.handle(entityID: F.relyingParty, path: "/historical-keys", request: get("/historical-keys"))?.status, 200)
    }
}
