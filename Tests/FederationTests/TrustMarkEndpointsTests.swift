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
        HTTPRequest(method: .get, path: path, rawQuery: query(pairs))
    }

    private func form(_ pairs: [(String, String)], method: String = "POST",
                      contentType: String = "application/x-www-form-urlencoded") -> HTTPRequest {
        HTTPRequest(method: HTTPMethod(method), path: "/trust-mark-status", headers: ["Content-Type": contentType], body: Array(query(pairs).utf8))
    }

    /// The endpoint's answer; a test failure (and a 404 stand-in) when nothing serves the path.
    private func answer(_ host: FederationHost, entityID: String, path: String, request: HTTPRequest,
                        file: StaticString = #filePath, line: UInt = #line) -> HTTPResponse {
        guard let r = host.handle(entityID: entityID, path: path, request: request) else {
            XCTFail("nothing serves \(path) at \(entityID)", file: file, line: line)
            return .error(status: .notFound, code: "not_found", description: path)
        }
        return r
    }

    private func assertError(_ response: HTTPResponse, _ status: HTTPStatus, _ code: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, status, file: file, line: line)
        XCTAssertEqual(response.header("Content-Type"), "application/json", file: file, line: line)
        let body = try? JSONValue.parse(response.body)
        XCTAssertEqual(body?["error"], .string(code), file: file, line: line)
        XCTAssertNotNil(body?["error_description"]?.stringValue, file: file, line: line)
    }

    func testTrustMarkEndpoint() throws {
        let (host, _, _) = try F.demo(clock: ManualClock(start))
        let ok = answer(host, entityID: F.trustAnchor, path: "/trust-mark", request: get("/trust-mark", [("trust_mark_type", F.basicMark), ("sub", F.pidProvider)]))
        XCTAssertEqual(ok.status, 200)
        XCTAssertEqual(ok.header("Content-Type"), "application/trust-mark+jwt")
        XCTAssertEqual(String(decoding: ok.body, as: UTF8.self),
                       try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider))

        assertError(answer(host, entityID: F.trustAnchor, path: "/trust-mark", request: get("/trust-mark", [("trust_mark_type", F.basicMark)])), 400, "invalid_request")
        assertError(answer(host, entityID: F.trustAnchor, path: "/trust-mark", request: get("/trust-mark", [("sub", F.pidProvider)])), 400, "invalid_request")
        assertError(answer(host, entityID: F.trustAnchor, path: "/trust-mark", request: get("/trust-mark", [
            ("trust_mark_type", F.basicMark), ("sub", F.pidProvider), ("sub", F.relyingParty),
        ])), 400, "invalid_request")
        assertError(answer(host, entityID: F.trustAnchor, path: "/trust-mark", request: get("/trust-mark", [
            ("trust_mark_type", F.basicMark), ("trust_mark_type", F.basicMark), ("sub", F.pidProvider),
        ])), 400, "invalid_request")
        assertError(answer(host, entityID: F.trustAnchor, path: "/trust-mark", request: get("/trust-mark", [("trust_mark_type", F.basicMark), ("sub", F.relyingParty)])),
                    404, "not_found")
    }

    func testTrustMarkStatusEndpoint() throws {
        let (host, _, _) = try F.demo(clock: ManualClock(start))
        let mark = try host.trustMark(issuer: F.trustAnchor, type: F.basicMark, subject: F.pidProvider)
        let ok = answer(host, entityID: F.trustAnchor, path: "/trust-mark-status", request: form([("trust_mark", mark)]))
        XCTAssertEqual(ok.status, 200)
        XCTAssertEqual(ok.header("Content-Type"), "application/trust-mark-status-response+jwt")
        XCTAssertEqual(try F.decode(String(decoding: ok.body, as: UTF8.self)).claims["status"], "active")

        let invalid = answer(host, entityID: F.trustAnchor, path: "/trust-mark-status", request: form([("trust_mark", "garbage")]))
        XCTAssertEqual(invalid.status, 200, "a broken mark is reported, not refused")
        XCTAssertEqual(try F.decode(String(decoding: invalid.body, as: UTF8.self)).claims["status"], "invalid")

        assertError(answer(host, entityID: F.trustAnchor, path: "/trust-mark-status", request: form([])), 400, "invalid_request")
        assertError(answer(host, entityID: F.trustAnchor, path: "/trust-mark-status", request: form([("trust_mark", "")])), 400, "invalid_request")
        assertError(answer(host, entityID: F.trustAnchor, path: "/trust-mark-status", request: form([("trust_mark", mark), ("trust_mark", mark)])), 400, "invalid_request")
        assertError(answer(host, entityID: F.trustAnchor, path: "/trust-mark-status", request: form([("trust_mark", mark)], contentType: "application/json")),
                    415, "invalid_request")
        // Section 8.4.1 defines POST only: the router answers any other method 405 with Allow.
        let viaGet = answer(host, entityID: F.trustAnchor, path: "/trust-mark-status", request: get("/trust-mark-status", [("trust_mark", mark)]))
        XCTAssertEqual(viaGet.status, .methodNotAllowed)
        XCTAssertEqual(viaGet.header("Allow"), "POST, OPTIONS")

        let foreign = try F.tampered(mark) { $0["iss"] = .string(F.intermediate) }
        assertError(answer(host, entityID: F.trustAnchor, path: "/trust-mark-status", request: form([("trust_mark", foreign)])), 404, "not_found")
    }

    func testTrustMarkListEndpoint() throws {
        let (host, _, _) = try F.demo(clock: ManualClock(start))
        let all = answer(host, entityID: F.trustAnchor, path: "/trust-mark-list", request: get("/trust-mark-list", [("trust_mark_type", F.basicMark)]))
        XCTAssertEqual(all.status, 200)
        XCTAssertEqual(all.header("Content-Type"), "application/json")
        XCTAssertEqual(try JSONValue.parse(all.body), [.string(F.pidProvider)])
        let one = answer(host, entityID: F.trustAnchor, path: "/trust-mark-list", request: get("/trust-mark-list", [("trust_mark_type", F.basicMark), ("sub", F.relyingParty)]))
        XCTAssertEqual(try JSONValue.parse(one.body), [])

        assertError(answer(host, entityID: F.trustAnchor, path: "/trust-mark-list", request: get("/trust-mark-list")), 400, "invalid_request")
        assertError(answer(host, entityID: F.trustAnchor, path: "/trust-mark-list", request: get("/trust-mark-list", [
            ("trust_mark_type", F.basicMark), ("sub", F.pidProvider), ("sub", F.relyingParty),
        ])), 400, "invalid_request")
        assertError(answer(host, entityID: F.trustAnchor, path: "/trust-mark-list", request: get("/trust-mark-list", [("trust_mark_type", F.base + "/marks/unknown")])),
                    404, "not_found")
    }

    func testHistoricalKeysEndpoint() throws {
        let (host, _, _) = try F.demo(clock: ManualClock(start))
        let response = answer(host, entityID: F.pidProvider, path: "/historical-keys", request: get("/historical-keys"))
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
