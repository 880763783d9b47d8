import HTTP
import JSON
import Support
import XCTest

/// Redirects, HTML, cookies and bodies.
final class HTTPHelpersTests: XCTestCase {
    func testRedirectAppendsToTheQuery() {
        XCTAssertEqual(HTTPResponse.redirect(to: "https://w.example/cb", adding: [("code", "a b&c")]).header("Location"),
                       "https://w.example/cb?code=a%20b%26c")
        XCTAssertEqual(HTTPResponse.redirect(to: "https://w.example/cb?x=1", adding: [("code", "c"), ("state", "s")]).header("Location"),
                       "https://w.example/cb?x=1&code=c&state=s")
        XCTAssertEqual(HTTPResponse.redirect(to: "app://cb?", adding: [("a", "1")]).header("Location"), "app://cb?a=1")
        XCTAssertEqual(HTTPResponse.redirect(to: "app://cb?x=1&", adding: [("a", "1")]).header("Location"), "app://cb?x=1&a=1")
        XCTAssertEqual(HTTPResponse.redirect(to: "https://w.example/cb#frag", adding: [("a", "1")]).header("Location"),
                       "https://w.example/cb?a=1#frag")
        // A `?` in the fragment is not a query; non-ASCII before the fragment stays as it is.
        XCTAssertEqual(HTTPResponse.redirect(to: "https://w.example/cb#f?x&", adding: [("a", "1")]).header("Location"),
                       "https://w.example/cb?a=1#f?x&")
        XCTAssertEqual(HTTPResponse.redirect(to: "app://café?é=1#ü", adding: [("a", "1")]).header("Location"), "app://café?é=1&a=1#ü")
        let plain = HTTPResponse.redirect(to: "https://w.example/cb", status: .seeOther)
        XCTAssertEqual(plain.status, .seeOther)
        XCTAssertEqual(plain.header("Location"), "https://w.example/cb")
        XCTAssertTrue(plain.body.isEmpty)
    }

    func testHTMLEscaping() {
        XCTAssertEqual(HTML.escape(#"<a href="x">Tom & 'Jerry'</a>"#),
                       "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;")
        XCTAssertEqual(HTML.escape("plain é"), "plain é")
        XCTAssertEqual(HTTPResponse.html("<p>").header("Content-Type"), "text/html; charset=utf-8")
    }

    /// A request built by hand carries the address it was given, and a handler may set one
    /// (the server's own are formatted on demand; HTTPServerRequestTests reads them).
    func testRemoteAddressIsSettable() {
        var request = HTTPRequest(method: .get, path: "/", remoteAddress: "192.0.2.7")
        XCTAssertEqual(request.remoteAddress, "192.0.2.7")
        request.remoteAddress = "2001:db8::1"
        XCTAssertEqual(request.remoteAddress, "2001:db8::1")
        XCTAssertEqual(HTTPRequest(method: .get, path: "/").remoteAddress, "")
    }

    func testRequestCookies() {
        let request = HTTPRequest(method: .get, path: "/", headers: ["Cookie": "session=abc; theme=\"dark\";x=1; bad; session=shadowed"])
        XCTAssertEqual(request.cookies, ["session": "abc", "theme": "dark", "x": "1"])
        XCTAssertEqual(HTTPRequest(method: .get, path: "/").cookies, [:])
    }

    func testSetCookie() {
        let request = HTTPRequest(method: .get, path: "/", headers: ["X-Forwarded-Proto": "https, http"])
        XCTAssertTrue(request.isSecure)
        let secure = HTTPResponse.text("x").setting(cookie: Cookie(name: "session", value: "abc", maxAge: 600), for: request)
        XCTAssertEqual(secure.header("Set-Cookie"), "session=abc; Path=/; Max-Age=600; Secure; HttpOnly; SameSite=Lax")
        let plain = HTTPResponse.text("x").setting(
            cookie: Cookie(name: "s", value: "v", path: "/issuer", httpOnly: false, sameSite: .strict),
            for: HTTPRequest(method: .get, path: "/"))
        XCTAssertEqual(plain.header("Set-Cookie"), "s=v; Path=/issuer; SameSite=Strict")
        let none = HTTPResponse.text("x").setting(cookie: Cookie(name: "s", value: "v", maxAge: 0, sameSite: .none), secure: false)
        XCTAssertEqual(none.header("Set-Cookie"), "s=v; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=None")
    }

    func testFormBody() throws {
        let form = HTTPRequest(method: .post, path: "/", headers: ["content-type": "application/x-www-form-urlencoded; charset=UTF-8"],
                               body: Array("grant_type=x&code=a%2Bb".utf8))
        let parameters = try form.formBody()
        XCTAssertEqual(try parameters.single("code"), "a+b")
        let json = HTTPRequest(method: .post, path: "/", headers: ["content-type": "application/json"], body: Array("a=b".utf8))
        XCTAssertThrowsError(try json.formBody()) { error in
            XCTAssertEqual(error as? HTTPError, .unsupportedMediaType("Content-Type application/json is not application/x-www-form-urlencoded"))
            XCTAssertEqual((error as? HTTPError)?.response.status, .unsupportedMediaType)
        }
        // An empty body carries no media type: it is an empty form, so the caller reports the
        // missing parameter rather than a media type problem.
        XCTAssertEqual(try HTTPRequest(method: .post, path: "/").formBody().pairs.count, 0)
        XCTAssertThrowsError(try HTTPRequest(method: .post, path: "/", body: Array("a=b".utf8)).formBody())
    }

    func testBodyAndParameterErrorsRenderAsInvalidRequest() throws {
        let broken = HTTPRequest(method: .post, path: "/", headers: ["content-type": "application/json"], body: Array("{".utf8))
        XCTAssertThrowsError(try broken.jsonBody()) { error in
            let response = (error as? HTTPError)?.response
            XCTAssertEqual(response?.status, .badRequest)
            XCTAssertEqual(response.flatMap { try? JSONValue.parse($0.body)["error"] }, "invalid_request")
        }
        let request = HTTPRequest(method: .get, path: "/", rawQuery: "a=1&a=2")
        XCTAssertThrowsError(try request.parameters.single("a")) { error in
            XCTAssertEqual((error as? ParameterError)?.status, .badRequest)
            XCTAssertEqual((error as? ParameterError)?.code, "invalid_request")
            XCTAssertEqual((error as? ParameterError)?.errorDescription, "a must not appear more than once")
        }
    }
}
