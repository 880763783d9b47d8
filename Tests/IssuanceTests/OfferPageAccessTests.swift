import HTTP
import Issuance
import Pages
import XCTest

/// The open offer pages on a loopback base URL: no foreign Host (DNS rebinding), no cross-site
/// post (CSRF); a public base URL and the admin token are unaffected.
final class OfferPageAccessTests: XCTestCase {
    private let form = "persona=erika&credential_configuration_id=urn%3Aeudi%3Apid%3A1&grant=pre-authorized_code&tx_code=yes"

    private func send(_ router: Router<String>, _ method: HTTPMethod, _ path: String, headers: [String: String],
                      form: String? = nil) -> HTTPResponse {
        var headers = headers
        if form != nil { headers["Content-Type"] = "application/x-www-form-urlencoded" }
        let request = HTTPRequest(method: method, path: "/pid-provider" + path, headers: headers, body: Array((form ?? "").utf8))
        return router.respond(to: request, path: Substring(path), context: "pid-provider") ?? HTTPResponse(status: .notFound)
    }

    private func text(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    func testHostTable() throws {
        let provider = try OfferTestProvider.make(issuer: "http://127.0.0.1:8080/pid-provider")
        let table: [(String, Bool)] = [
            ("127.0.0.1:8080", true), ("localhost:8080", true), ("LOCALHOST:8080", true), ("[::1]:8080", true),
            ("127.0.0.1", true),  // a local proxy's $host
            ("evil.example:8080", false), ("evil.example", false), ("127.0.0.1:9090", false), ("localhost.evil.example:8080", false),
            ("127.0.0.1.evil:8080", false), ("192.168.1.5:8080", false), ("127.0.0.2:8080", false), ("user@127.0.0.1:8080", false),
            ("127.0.0.1:8080/x", false), ("", false),
        ]
        for (host, allowed) in table {
            XCTAssertEqual(provider.openPageRefusal(PageRequestSource(host: host)) == nil, allowed, host)
        }
        XCTAssertNil(provider.openPageRefusal(PageRequestSource(host: nil)), "no Host: not a browser")
        XCTAssertNotNil(provider.openPageRefusal(PageRequestSource(host: "127.0.0.1:8080", forwardedHosts: ["evil.example:8080"])))
        XCTAssertNotNil(provider.openPageRefusal(PageRequestSource(host: "127.0.0.1:8080", forwardedHosts: ["localhost:8080, evil.example"])))
        XCTAssertNil(provider.openPageRefusal(PageRequestSource(host: "127.0.0.1:8080", forwardedHosts: ["localhost:8080"])))
    }

    func testPostOriginTable() throws {
        let provider = try OfferTestProvider.make(issuer: "http://localhost:8080/pid-provider")
        let host = "localhost:8080"
        let table: [(origin: String?, referer: String?, site: String?, allowed: Bool)] = [
            (nil, nil, nil, true),  // curl
            ("http://localhost:8080", nil, "same-origin", true),
            ("http://127.0.0.1:8080", nil, nil, true),
            ("null", nil, "same-origin", true),  // our own form under Referrer-Policy: no-referrer
            ("null", nil, nil, false),
            ("null", nil, "cross-site", false),
            ("http://evil.example", nil, nil, false),
            ("http://evil.example", nil, "cross-site", false),
            ("http://localhost:3000", nil, "same-site", false),
            ("https://localhost:8080", nil, nil, false),
            (nil, nil, "cross-site", false),
            (nil, nil, "same-site", false),
            (nil, "http://evil.example/page", nil, false),
            (nil, "http://localhost:8080/pid-provider/offers/new", nil, true),
            ("http://localhost:8080", nil, "cross-site", false),
        ]
        for row in table {
            let source = PageRequestSource(host: host, origin: row.origin, referer: row.referer, fetchSite: row.site, isPost: true)
            XCTAssertEqual(provider.openPageRefusal(source) == nil, row.allowed, "\(row)")
        }
        // Origin matters for posts only: a cross-site link to the form just shows it.
        XCTAssertNil(provider.openPageRefusal(PageRequestSource(host: host, origin: "http://evil.example", fetchSite: "cross-site")))
    }

    func testRoutesAnswer403PagesWithoutOffers() throws {
        let provider = try OfferTestProvider.make(issuer: "http://127.0.0.1:8080/pid-provider")
        let router = IssuanceRoutes(provider: provider).router()
        let rebound = send(router, .post, "/offers/new", headers: ["Host": "evil.example:8080"], form: form)
        XCTAssertEqual(rebound.status, .forbidden)
        XCTAssertEqual(rebound.header("content-type"), "text/html; charset=utf-8")
        XCTAssertTrue(text(rebound).contains("evil.example:8080"))
        XCTAssertNil(rebound.header("location"), "no offer was created")
        let csrf = send(router, .post, "/offers/new", headers: ["Host": "127.0.0.1:8080", "Origin": "http://evil.example"], form: form)
        XCTAssertEqual(csrf.status, .forbidden)
        XCTAssertNil(csrf.header("location"))
        XCTAssertEqual(send(router, .get, "/offers/new", headers: ["Host": "evil.example:8080"]).status, .forbidden)

        let made = send(router, .post, "/offers/new",
                        headers: ["Host": "localhost:8080", "Origin": "null", "Sec-Fetch-Site": "same-origin"], form: form)
        XCTAssertEqual(made.status, .seeOther)
        let id = try XCTUnwrap(made.header("location")?.split(separator: "/").last)
        let page = send(router, .get, "/offers/\(id)", headers: ["Host": "evil.example:8080"])
        XCTAssertEqual(page.status, .forbidden)
        let tx = try XCTUnwrap(provider.offer(id: String(id))?.txCode)
        XCTAssertFalse(text(page).contains(tx), "a rebound page must not show the tx_code")
        XCTAssertEqual(send(router, .get, "/offers/\(id)", headers: ["Host": "127.0.0.1:8080"]).status, .ok)

        // The admin token vouches for a request from anywhere.
        let admin = send(router, .post, "/offers/new",
                         headers: ["Host": "evil.example:8080", "Authorization": "Bearer admin-secret"], form: form)
        XCTAssertEqual(admin.status, .seeOther)
    }

    func testPublicBaseURLIsUnaffected() throws {
        let provider = try OfferTestProvider.make()  // https://issuer.example: the admin token guards the form
        XCTAssertNil(provider.openPageRefusal(PageRequestSource(host: "anything.example", origin: "http://evil.example", isPost: true)))
    }

    func testLoopbackBaseURLs() throws {
        for (issuer, open) in [("http://127.0.0.1:8080/p", true), ("http://localhost/p", true), ("http://[::1]:9/p", true),
                               ("http://127.0.0.53/p", true), ("http://dev.localhost/p", true),
                               ("http://127.evil.example/p", false), ("http://localhost.evil.example/p", false),
                               ("https://issuer.example/p", false), ("http://127.0.0.1.nip.io/p", false)] {
            XCTAssertEqual(!(try OfferTestProvider.make(issuer: issuer).offerFormNeedsAdminToken), open, issuer)
        }
    }
}
