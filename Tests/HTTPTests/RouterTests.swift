import Foundation
import HTTP
import JSON
import Support
import XCTest

/// Routing inside one service: templates, parameters, methods, thrown errors, memo marks.
final class RouterTests: XCTestCase {
    private struct Teapot: ErrorResponse {
        var status: HTTPStatus { 418 }
        var code: String { "teapot" }
        var errorDescription: String { "short and stout" }
        var headers: [(name: String, value: String)] { [(name: "WWW-Authenticate", value: "DPoP error=\"teapot\"")] }
    }

    private struct Unexpected: Error { let secret = "db password" }

    private var router: Router<String> {
        var router = Router<String>()
        router.get("/offers/{id}") { context, _, parameters in
            .json(["context": .string(context), "id": .string(parameters.require("id"))])
        }
        router.get("/offers/{id}/items/{item}") { _, _, p in .json(["id": .string(p["id"]!), "item": .string(p["item"]!)]) }
        router.get("/offers/latest") { _, _, _ in .text("latest") }
        router.post("/offers", policy: .perClient) { _, _, _ in .json(["created": true], status: .created) }
        router.get("/") { _, _, _ in .text("root") }
        router.get("/teapot") { _, _, _ in throw Teapot() }
        router.get("/boom") { _, _, _ in throw Unexpected() }
        router.get("/param") { _, request, _ in .text(try request.parameters.single("sub")) }
        router.get("/redirect", policy: .html) { _, _, _ in
            throw RedirectedError(Teapot(), target: "https://wallet.example/cb?x=1", state: "s t", issuer: "https://as.example")
        }
        router.get("/memo", memo: true) { _, _, _ in .text("m") }
        router.get("/memo-bounded", memo: true) { _, _, _ in HTTPResponse.text("m").reusable(until: 42) }
        router.get("/no-memo") { _, _, _ in HTTPResponse.text("m").reusable(until: 42) }
        return router
    }

    private func respond(_ method: HTTPMethod, _ path: String, query: String? = nil) -> HTTPResponse? {
        router.respond(to: HTTPRequest(method: method, path: "/mount" + path, rawQuery: query), path: Substring(path), context: "ctx")
    }

    func testLiteralAndTemplateSegments() throws {
        let offer = try XCTUnwrap(respond(.get, "/offers/abc"))
        XCTAssertEqual(try JSONValue.parse(offer.body), ["context": "ctx", "id": "abc"])
        XCTAssertEqual(respond(.get, "/offers/latest")?.body, Array("latest".utf8), "a literal route matches its own path")
        let item = try XCTUnwrap(respond(.get, "/offers/a%20b/items/7"))
        XCTAssertEqual(try JSONValue.parse(item.body), ["id": "a%20b", "item": "7"])
        XCTAssertEqual(respond(.get, "")?.body, Array("root".utf8), "an empty rest is the mount's root")
        XCTAssertEqual(respond(.get, "/")?.body, Array("root".utf8))
    }

    func testLiteralPathsOfEqualLengthPrefixesAndCase() {
        var router = Router<String>()
        router.get("/aaaa") { _, _, _ in .text("a") }
        router.get("/aaab") { _, _, _ in .text("b") }
        router.get("/aaa") { _, _, _ in .text("c") }
        router.get("/.well-known/x") { _, _, _ in .text("w") }
        func body(_ path: String) -> String? {
            router.respond(to: HTTPRequest(method: .get, path: path), path: Substring(path), context: "").map { String(decoding: $0.body, as: UTF8.self) }
        }
        XCTAssertEqual(body("/aaab"), "b", "same length, last byte differs")
        XCTAssertEqual(body("/aaaa"), "a")
        XCTAssertEqual(body("/aaa"), "c")
        XCTAssertEqual(body("/.well-known/x"), "w")
        XCTAssertNil(body("/aaaab"), "a literal path is matched whole, not as a prefix")
        XCTAssertNil(body("/aa"))
        XCTAssertNil(body("/AAAB"), "paths are case-sensitive")
        // A path inside a longer string, as the site hands it over (a Substring of the request path).
        let full = "/mount/aaab"
        let rest = full[full.index(full.startIndex, offsetBy: 6)...]
        XCTAssertEqual(router.respond(to: HTTPRequest(method: .get, path: full), path: rest, context: "")?.body, Array("b".utf8))
    }

    func testUnmatchedPathsAreNil() {
        XCTAssertNil(respond(.get, "/offers/"), "a {name} segment is never empty")
        XCTAssertNil(respond(.get, "/offers/a/"))
        XCTAssertNil(respond(.get, "/offers/a/items"))
        XCTAssertNil(respond(.get, "/Offers/latest"), "paths are case-sensitive")
        XCTAssertNil(respond(.get, "/nothing"))
    }

    func testHeadIsServedByGet() {
        XCTAssertEqual(respond(.head, "/offers/latest")?.status, .ok)
    }

    func testMethodNotAllowedListsAllow() throws {
        let post = try XCTUnwrap(respond(.post, "/offers/abc"))
        XCTAssertEqual(post.status, .methodNotAllowed)
        XCTAssertEqual(post.header("Allow"), "GET, HEAD, OPTIONS")
        XCTAssertEqual(try JSONValue.parse(post.body)["error"], "invalid_request")
        XCTAssertEqual(post.header("Access-Control-Allow-Origin"), "*")
        let get = try XCTUnwrap(respond(.get, "/offers"))
        XCTAssertEqual(get.status, .methodNotAllowed)
        XCTAssertEqual(get.header("Allow"), "POST", "no OPTIONS on a path without public routes")
        XCTAssertNil(get.header("Access-Control-Allow-Origin"))
        XCTAssertEqual(respond(.other("BREW"), "/offers/abc")?.status, .methodNotAllowed)
    }

    func testPreflightOnlyOnPublicRoutes() throws {
        let preflight = try XCTUnwrap(respond(.options, "/offers/abc"))
        XCTAssertEqual(preflight.status, .noContent)
        XCTAssertEqual(preflight.header("Access-Control-Allow-Origin"), "*")
        XCTAssertEqual(preflight.header("Access-Control-Allow-Methods"), "GET, HEAD, OPTIONS")
        XCTAssertEqual(preflight.header("Access-Control-Allow-Headers"), "Content-Type, Authorization, DPoP")
        let refused = try XCTUnwrap(respond(.options, "/offers"))
        XCTAssertEqual(refused.status, .methodNotAllowed)
        XCTAssertNil(refused.header("Access-Control-Allow-Origin"))
    }

    func testThrownErrorsRenderThemselves() throws {
        let teapot = try XCTUnwrap(respond(.get, "/teapot"))
        XCTAssertEqual(teapot.status, 418)
        XCTAssertEqual(try JSONValue.parse(teapot.body), ["error": "teapot", "error_description": "short and stout"])
        XCTAssertEqual(teapot.header("WWW-Authenticate"), "DPoP error=\"teapot\"")
        XCTAssertEqual(teapot.header("Access-Control-Allow-Origin"), "*", "errors carry the route's policy")

        let missing = try XCTUnwrap(respond(.get, "/param"))
        XCTAssertEqual(missing.status, .badRequest)
        XCTAssertEqual(try JSONValue.parse(missing.body), ["error": "invalid_request", "error_description": "sub is required"])
        XCTAssertEqual(respond(.get, "/param", query: "sub=x")?.body, Array("x".utf8))
    }

    func testOtherErrorsAre500WithoutDetail() throws {
        let boom = try XCTUnwrap(respond(.get, "/boom"))
        XCTAssertEqual(boom.status, .internalServerError)
        XCTAssertEqual(try JSONValue.parse(boom.body)["error"], "server_error")
        XCTAssertFalse(String(decoding: boom.body, as: UTF8.self).contains("password"))
    }

    func testRedirectedError() throws {
        let redirect = try XCTUnwrap(respond(.get, "/redirect"))
        XCTAssertEqual(redirect.status, .found)
        XCTAssertEqual(
            redirect.header("Location"),
            "https://wallet.example/cb?x=1&error=teapot&error_description=short%20and%20stout&state=s%20t&iss=https%3A%2F%2Fas.example")
        XCTAssertNotNil(redirect.header("Content-Security-Policy"), "the route's policy applies")
        let seeOther = RedirectedError(HTTPError.badRequest("no"), target: "app://cb", status: .seeOther).response
        XCTAssertEqual(seeOther.status, .seeOther)
        XCTAssertEqual(seeOther.header("Location"), "app://cb?error=invalid_request&error_description=no")
    }

    func testMemoOnlyOnRoutesThatOptIn() {
        XCTAssertEqual(respond(.get, "/memo")?.reusableUntil, .max, "memo: true marks the answer")
        XCTAssertEqual(respond(.get, "/memo-bounded")?.reusableUntil, 42, "the handler's own bound is kept")
        XCTAssertNil(respond(.get, "/no-memo")?.reusableUntil, "a route without memo drops the mark")
        XCTAssertNil(respond(.get, "/offers/a")?.reusableUntil)
    }

    func testDeferredAnswersGetThePolicyAndErrorRendering() {
        var router = Router<Void>()
        router.get("/slow", policy: .perClient) { _, _, _ in
            .deferred { complete in DispatchQueue.global().async { complete.fail(Teapot()) } }
        }
        router.get("/ok", memo: true) { _, _, _ in
            .deferred { complete in DispatchQueue.global().async { complete(.json(["ok": true])) } }
        }
        let pending = router.respond(to: HTTPRequest(method: .get, path: "/slow"), path: "/slow", context: ())
        XCTAssertEqual(pending?.isDeferred, true)
        let failed = pending?.resolved()
        XCTAssertEqual(failed?.status, 418)
        XCTAssertEqual(failed?.header("Cache-Control"), "no-store")
        XCTAssertNil(failed?.header("Access-Control-Allow-Origin"))
        let ok = router.respond(to: HTTPRequest(method: .get, path: "/ok"), path: "/ok", context: ())?.resolved()
        XCTAssertEqual(ok?.status, .ok)
        XCTAssertEqual(ok?.header("Access-Control-Allow-Origin"), "*")
        XCTAssertEqual(ok?.reusableUntil, .max)
    }

    /// One router for a mount that serves several services: every route answers as in its own
    /// router, and a template in two of them is one path with both methods (one `Allow`).
    func testMergedRouterAnswersEveryRoute() throws {
        var a = Router<String>()
        a.get("/.well-known/x", memo: true) { context, _, _ in .text("x \(context)") }
        a.get("/shared") { _, _, _ in .text("get") }
        var b = Router<String>()
        b.post("/shared", policy: .perClient) { _, _, _ in .text("post") }
        b.get("/items/{id}") { _, _, p in .text(p.require("id")) }
        let merged = Router(merging: [a, b])
        func respond(_ method: HTTPMethod, _ path: String) -> HTTPResponse? {
            merged.respond(to: HTTPRequest(method: method, path: path), path: Substring(path), context: "ctx")
        }
        XCTAssertEqual(respond(.get, "/.well-known/x")?.body, Array("x ctx".utf8))
        XCTAssertEqual(respond(.get, "/.well-known/x")?.reusableUntil, .max, "the route keeps its memo choice")
        XCTAssertEqual(respond(.get, "/shared")?.body, Array("get".utf8))
        XCTAssertEqual(respond(.post, "/shared")?.header("Cache-Control"), "no-store", "and its policy")
        XCTAssertEqual(respond(.get, "/items/7")?.body, Array("7".utf8))
        XCTAssertEqual(respond(.delete, "/shared")?.header("Allow"), "GET, HEAD, POST, OPTIONS")
        XCTAssertNil(respond(.get, "/nothing"))
    }

    func testMethodsAndStatusesFromLiterals() {
        XCTAssertEqual(HTTPMethod("GET"), .get)
        XCTAssertEqual(HTTPMethod("get"), .other("get"), "methods are case-sensitive")
        let method: HTTPMethod = "PATCH"
        XCTAssertEqual(method, .patch)
        XCTAssertEqual(HTTPRequest(method: "POST", path: "/").method, .post)
        let status: HTTPStatus = 404
        XCTAssertEqual(status, .notFound)
        XCTAssertEqual(HTTPResponse.error(status: 429, code: "slow_down", description: "").status, .tooManyRequests)
        XCTAssertTrue(HTTPStatus.serviceUnavailable.isServerError)
    }
}
