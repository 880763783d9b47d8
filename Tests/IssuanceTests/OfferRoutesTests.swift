import HTTP
import Issuance
import JSON
import Support
import XCTest

/// The offer routes as a client sees them, through the issuer's router (no socket).
final class OfferRoutesTests: XCTestCase {
    private func send(_ router: Router<String>, _ method: HTTPMethod, _ path: String, headers: [String: String] = [:],
                      body: String = "") -> HTTPResponse {
        let request = HTTPRequest(method: method, path: "/pid-provider" + path, headers: headers, body: Array(body.utf8))
        return router.respond(to: request, path: Substring(path), context: "pid-provider")
            ?? HTTPResponse(status: .notFound)
    }

    private func json(_ response: HTTPResponse) throws -> JSONValue { try JSONValue.parse(response.body) }

    func testAdminAPIRefusesWithoutTheToken() throws {
        let router = IssuanceRoutes(provider: try OfferTestProvider.make()).router()
        let body = #"{"persona": "erika"}"#
        for headers in [[:], ["Authorization": "Bearer wrong"], ["Authorization": "Basic YWRtaW4="]] {
            let response = send(router, .post, "/admin/offers", headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a },
                                body: body)
            XCTAssertEqual(response.status, .unauthorized)
            XCTAssertEqual(try json(response)["error"], "unauthorized")
            XCTAssertTrue(response.header("www-authenticate")?.hasPrefix("Bearer") == true)
            XCTAssertEqual(response.header("cache-control"), "no-store")
        }
    }

    func testCreateThenFetchByReference() throws {
        let clock = ManualClock(OfferTestProvider.start)
        let provider = try OfferTestProvider.make(clock: clock)
        let router = IssuanceRoutes(provider: provider).router()
        let created = send(router, .post, "/admin/offers",
                           headers: ["Authorization": "Bearer admin-secret", "Content-Type": "application/json"],
                           body: #"{"persona": "erika", "credential_configuration_ids": ["urn:eudi:pid:1"], "tx_code": true}"#)
        XCTAssertEqual(created.status, .created)
        let answer = try json(created)
        let id = try XCTUnwrap(answer["offer_id"]?.stringValue)
        let issuer = OfferTestProvider.issuer
        XCTAssertEqual(answer["credential_offer_uri"], .string("\(issuer)/offers/\(id)/credential-offer"))
        XCTAssertEqual(answer["offer_url"], .string("openid-credential-offer://?credential_offer_uri="
                                                    + URLEncoding.encode("\(issuer)/offers/\(id)/credential-offer")))
        XCTAssertEqual(answer["qr_png"], .string("\(issuer)/offers/\(id)/qr.png"))
        XCTAssertEqual(answer["qr_svg"], .string("\(issuer)/offers/\(id)/qr.svg"))
        XCTAssertEqual(answer["offer_page"], .string("\(issuer)/offers/\(id)"))
        XCTAssertEqual(answer["tx_code"]?.stringValue?.count, 6)
        XCTAssertEqual(answer["credential_offer"]?["credential_configuration_ids"], ["urn:eudi:pid:1"])

        let fetched = send(router, .get, "/offers/\(id)/credential-offer")
        XCTAssertEqual(fetched.status, .ok)
        XCTAssertEqual(fetched.header("content-type"), "application/json")
        XCTAssertEqual(fetched.header("cache-control"), "no-store")
        XCTAssertEqual(try json(fetched), answer["credential_offer"])

        clock.advance(600)
        let expired = send(router, .get, "/offers/\(id)/credential-offer")
        XCTAssertEqual(expired.status, .notFound)
        XCTAssertEqual(try json(expired)["error"], "not_found")
        XCTAssertEqual(send(router, .get, "/offers/\(id)/qr.png").status, .notFound)
    }

    func testAdminAPIRefusesBadRequests() throws {
        let router = IssuanceRoutes(provider: try OfferTestProvider.make()).router()
        let headers = ["Authorization": "Bearer admin-secret", "Content-Type": "application/json"]
        for body in [#"{"persona": "nobody"}"#, #"{"persona": "erika", "credential_configuration_ids": ["nope"]}"#, "{", "[]"] {
            let response = send(router, .post, "/admin/offers", headers: headers, body: body)
            XCTAssertEqual(response.status, .badRequest, body)
            XCTAssertEqual(try json(response)["error"], "invalid_request", body)
        }
    }

    func testQRRoutes() throws {
        let provider = try OfferTestProvider.make()
        let router = IssuanceRoutes(provider: provider).router()
        let offer = try provider.createOffer(OfferRequest(personaID: "erika"))
        let png = send(router, .get, "/offers/\(offer.id)/qr.png")
        XCTAssertEqual(png.header("content-type"), "image/png")
        XCTAssertEqual(Array(png.body.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let svg = send(router, .get, "/offers/\(offer.id)/qr.svg")
        XCTAssertEqual(svg.header("content-type"), "image/svg+xml")
        XCTAssertTrue(String(decoding: svg.body, as: UTF8.self).contains("<path"))
    }
}
