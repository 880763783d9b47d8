import HTTP
import Issuance
import JSON
import Support
import XCTest

/// The offer pages: escaped, script-free, and the form's create-and-redirect.
final class PageTests: XCTestCase {
    private func send(_ router: Router<String>, _ method: HTTPMethod, _ path: String, form: String? = nil) -> HTTPResponse {
        var headers: [String: String] = [:]
        if form != nil { headers["Content-Type"] = "application/x-www-form-urlencoded" }
        let request = HTTPRequest(method: method, path: "/pid-provider" + path, headers: headers, body: Array((form ?? "").utf8))
        return router.respond(to: request, path: Substring(path), context: "pid-provider") ?? HTTPResponse(status: .notFound)
    }

    private func text(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    func testNewOfferFormListsEscapedPersonas() throws {
        let provider = try OfferTestProvider.make(issuer: "http://127.0.0.1:8080/pid-provider")
        let router = IssuanceRoutes(provider: provider).router()
        let response = send(router, .get, "/offers/new")
        XCTAssertEqual(response.status, .ok)
        XCTAssertTrue(response.header("content-security-policy")?.contains("frame-ancestors 'none'") == true)
        let html = text(response)
        XCTAssertTrue(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; O&#39;Brien &amp; &quot;Co&quot;"), html)
        XCTAssertFalse(html.contains("<script"))
        XCTAssertTrue(html.contains("Zoë Ðorđević"))
        XCTAssertTrue(html.contains(#"value="urn:eudi:pid:1" checked"#))
        XCTAssertTrue(html.contains("PID &lt;SD-JWT&gt;"))
        XCTAssertTrue(html.contains(#"action="new""#), "relative: the post stays on the page's origin")
        XCTAssertFalse(html.contains("admin_token"), "a loopback issuer's form is open")
    }

    func testFormCreatesAndRedirectsToTheOfferPage() throws {
        let provider = try OfferTestProvider.make(issuer: "http://localhost:8080/pid-provider")
        let router = IssuanceRoutes(provider: provider).router()
        let response = send(router, .post, "/offers/new",
                            form: "persona=evil&credential_configuration_id=urn%3Aeudi%3Apid%3A1&grant=pre-authorized_code&tx_code=yes")
        XCTAssertEqual(response.status, .seeOther)
        let location = try XCTUnwrap(response.header("location"))
        XCTAssertTrue(location.hasPrefix("http://localhost:8080/pid-provider/offers/"), location)
        let id = String(location.split(separator: "/").last!)
        let offer = try XCTUnwrap(provider.offer(id: id))
        XCTAssertEqual(offer.personaID, "evil")
        XCTAssertEqual(offer.credentialConfigurationIDs, ["urn:eudi:pid:1"])

        let page = send(router, .get, "/offers/\(id)")
        XCTAssertEqual(page.status, .ok)
        let html = text(page)
        XCTAssertTrue(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; O&#39;Brien &amp; &quot;Co&quot;"))
        XCTAssertFalse(html.contains("<script"))
        XCTAssertTrue(html.contains(#"<p class="code" id="tx_code">\#(try XCTUnwrap(offer.txCode))</p>"#))
        XCTAssertTrue(html.contains(#"href="openid-credential-offer://?credential_offer_uri=http%3A%2F%2Flocalhost%3A8080%2Fpid-provider%2Foffers%2F\#(id)%2Fcredential-offer""#), html)
        XCTAssertTrue(html.contains(#"src="data:image/png;base64,"#))
        XCTAssertTrue(html.contains("PID &lt;SD-JWT&gt;"))

        XCTAssertEqual(send(router, .get, "/offers/unknown").status, .notFound)
    }

    func testFormErrorsComeBackAsThePage() throws {
        let router = IssuanceRoutes(provider: try OfferTestProvider.make(issuer: "http://127.0.0.1:8080/pid-provider")).router()
        let response = send(router, .post, "/offers/new", form: "persona=erika&grant=pre-authorized_code")
        XCTAssertEqual(response.status, .badRequest)
        XCTAssertTrue(text(response).contains("pick at least one credential"))
        XCTAssertEqual(response.header("content-type"), "text/html; charset=utf-8")
    }

    func testPublicIssuerFormNeedsTheAdminToken() throws {
        let provider = try OfferTestProvider.make()  // https://issuer.example
        let router = IssuanceRoutes(provider: provider).router()
        XCTAssertTrue(text(send(router, .get, "/offers/new")).contains(#"name="admin_token""#))
        let form = "persona=erika&credential_configuration_id=urn%3Aeudi%3Apid%3A1"
        XCTAssertEqual(send(router, .post, "/offers/new", form: form).status, .forbidden)
        XCTAssertEqual(send(router, .post, "/offers/new", form: form + "&admin_token=wrong").status, .forbidden)
        XCTAssertEqual(send(router, .post, "/offers/new", form: form + "&admin_token=admin-secret").status, .seeOther)
    }
}
