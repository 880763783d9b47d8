import Foundation
import HTTP
import JSON
import XCTest

/// The mount table: which mount and route path a request URL reaches.
final class SiteTests: XCTestCase {
    private static let base = "http://127.0.0.1:8080"

    /// Every mount answers `{"mount": <its URL>, "path": <route path>}` on any path.
    private static func site(_ urls: [String], root: Router<Void> = Router()) -> Site<String> {
        var echo = Router<String>()
        echo.get("/{a}") { url, request, p in .json(["mount": .string(url), "path": .string("/" + p["a"]!)]) }
        echo.get("/{a}/{b}") { url, _, p in .json(["mount": .string(url), "path": .string("/\(p["a"]!)/\(p["b"]!)")]) }
        echo.get("/") { url, _, _ in .json(["mount": .string(url), "path": "/"]) }
        return Site(baseURL: base, mounts: urls.map { .init(url: $0, context: $0, routers: [echo]) }, root: root)
    }

    private func get(_ site: Site<String>, _ path: String, _ headers: [String: String] = ["host": "127.0.0.1:8080"]) -> JSONValue? {
        try? JSONValue.parse(site.respond(to: HTTPRequest(method: .get, path: path, headers: headers)).body)
    }

    private let demo = site([
        "\(base)/ta", "\(base)/ta/sub", "\(base)/pid-provider", "https://other.example", "https://deep.example/a/b",
    ])

    func testLongestPrefixAtSegmentBoundaries() {
        XCTAssertEqual(get(demo, "/ta/fetch"), ["mount": .string("\(Self.base)/ta"), "path": "/fetch"])
        XCTAssertEqual(get(demo, "/ta/sub/fetch"), ["mount": .string("\(Self.base)/ta/sub"), "path": "/fetch"])
        XCTAssertEqual(get(demo, "/ta/sub"), ["mount": .string("\(Self.base)/ta/sub"), "path": "/"])
        XCTAssertEqual(get(demo, "/ta/"), ["mount": .string("\(Self.base)/ta"), "path": "/"])
        XCTAssertEqual(get(demo, "/ta/subway"), ["mount": .string("\(Self.base)/ta"), "path": "/subway"])
        XCTAssertEqual(get(demo, "/tax/fetch")?["error"], "not_found", "a prefix must end at a segment boundary")
    }

    func testHostAndForwardedHeaders() {
        let other = ["host": "127.0.0.1:8080", "x-forwarded-host": "Other.Example, proxy.internal", "x-forwarded-proto": "https"]
        XCTAssertEqual(get(demo, "/fetch", other), ["mount": "https://other.example", "path": "/fetch"])
        XCTAssertEqual(get(demo, "/fetch", ["host": "other.example", "x-forwarded-proto": "HTTPS"])?["mount"], "https://other.example")
        XCTAssertEqual(get(demo, "/fetch", ["host": "other.example"])?["error"], "not_found", "http is another origin")
        XCTAssertEqual(get(demo, "/a/b/x", ["host": "deep.example", "x-forwarded-proto": "https"]),
                       ["mount": "https://deep.example/a/b", "path": "/x"])
        XCTAssertEqual(get(demo, "/a/x", ["host": "deep.example", "x-forwarded-proto": "https"])?["error"], "not_found")
    }

    func testMountsUnderTheBaseURLMatchByPathWhateverTheHost() {
        XCTAssertEqual(get(demo, "/ta/fetch", ["host": "localhost:8080"])?["mount"], .string("\(Self.base)/ta"))
        XCTAssertEqual(get(demo, "/ta/fetch", [:])?["mount"], .string("\(Self.base)/ta"), "even without Host")
        XCTAssertEqual(get(demo, "/ta/fetch", ["host": "other.example", "x-forwarded-proto": "https"])?["mount"],
                       "https://other.example", "the host's own mount wins")
        XCTAssertEqual(get(demo, "/a/b/x", ["host": "localhost"])?["error"], "not_found", "a mount elsewhere needs its host")
    }

    func testBaseURLWithAPath() {
        let site = Self.site(["https://example.org/tb/ta"])
        let request = HTTPRequest(method: .get, path: "/tb/ta/fetch", headers: ["host": "internal:8080"])
        XCTAssertEqual(try JSONValue.parse(Site(baseURL: "https://example.org/tb", mounts: [
            .init(url: "https://example.org/tb/ta", context: "ta", routers: [Self.pathEcho]),
        ]).respond(to: request).body), ["path": "/fetch"])
        XCTAssertEqual(get(site, "/tb/ta/fetch", ["host": "internal"])?["error"], "not_found", "not under this site's base")
    }

    private static let pathEcho: Router<String> = {
        var router = Router<String>()
        router.get("/fetch") { _, _, _ in .json(["path": "/fetch"]) }
        return router
    }()

    func testInsertionFormOfWellKnownURLs() {
        XCTAssertEqual(get(demo, "/.well-known/openid-credential-issuer/pid-provider"),
                       ["mount": .string("\(Self.base)/pid-provider"), "path": "/.well-known/openid-credential-issuer"])
        XCTAssertEqual(get(demo, "/.well-known/oauth-authorization-server/ta/sub"),
                       ["mount": .string("\(Self.base)/ta/sub"), "path": "/.well-known/oauth-authorization-server"])
        XCTAssertEqual(get(demo, "/.well-known/oauth-authorization-server/a/b", ["host": "deep.example", "x-forwarded-proto": "https"])?["mount"],
                       "https://deep.example/a/b")
        XCTAssertEqual(get(demo, "/.well-known/x/nothing")?["error"], "not_found")
        XCTAssertEqual(get(demo, "/.well-known/openid-federation")?["error"], "not_found")
        let request = HTTPRequest(method: .get, path: "/.well-known/openid-credential-issuer/pid-provider", headers: ["host": "x"])
        XCTAssertEqual(demo.mount(for: request)?.mount.url, "\(Self.base)/pid-provider")
        XCTAssertEqual(demo.mount(for: request)?.path, "/.well-known/openid-credential-issuer")
    }

    func testOriginsCompareIgnoringCaseAndTheFirstOfTwoEqualMountsWins() {
        var first = Router<String>()
        first.get("/fetch") { _, _, _ in .text("first") }
        var second = Router<String>()
        second.get("/fetch") { _, _, _ in .text("second") }
        let site = Site(baseURL: Self.base, mounts: [
            .init(url: "HTTPS://Other.Example/e", context: "e", routers: [first]),
            .init(url: "https://other.example/e/", context: "e", routers: [second]),
        ])
        let request = HTTPRequest(method: .get, path: "/e/fetch", headers: ["host": "OTHER.example", "x-forwarded-proto": "https"])
        XCTAssertEqual(site.respond(to: request).body, Array("first".utf8))
        XCTAssertEqual(site.respond(to: HTTPRequest(method: .get, path: "/e/fetch", headers: ["host": "other.example"])).status,
                       .notFound, "http is another origin")
    }

    /// A `Host` equal to the base URL's authority as written takes a shortcut to the base origin;
    /// any other spelling, and the same host over https, must still reach the mount they name.
    func testBaseOriginWhateverTheSpellingOfHostButNotOverHTTPS() {
        var plain = Router<String>()
        plain.get("/fetch") { _, _, _ in .text("http") }
        var secure = Router<String>()
        secure.get("/fetch") { _, _, _ in .text("https") }
        let site = Site(baseURL: "http://LocalHost:8080", mounts: [
            .init(url: "https://localhost:8080/e", context: "s", routers: [secure]),
            .init(url: "http://localhost:8080/e", context: "p", routers: [plain]),
        ])
        func body(_ headers: [String: String]) -> String {
            String(decoding: site.respond(to: HTTPRequest(method: .get, path: "/e/fetch", headers: headers)).body, as: UTF8.self)
        }
        XCTAssertEqual(body(["host": "localhost:8080"]), "http")
        XCTAssertEqual(body(["host": "LOCALHOST:8080"]), "http")
        XCTAssertEqual(body(["host": "localhost:8080", "x-forwarded-proto": "https"]), "https")
        XCTAssertEqual(body(["host": "other:1", "x-forwarded-host": "localhost:8080", "x-forwarded-proto": "https"]), "https")
        XCTAssertEqual(body(["host": "other:1", "x-forwarded-host": "localhost:8080"]), "http")
    }

    func testRootRoutesAndNotFound() throws {
        var root = Router<Void>()
        root.get("/health") { _, _, _ in .json(["status": "ok"]) }
        let site = Self.site(["\(Self.base)/ta"], root: root)
        XCTAssertEqual(get(site, "/health", ["host": "anything"]), ["status": "ok"])
        let missing = site.respond(to: HTTPRequest(method: .get, path: "/nope"))
        XCTAssertEqual(missing.status, .notFound)
        XCTAssertEqual(try JSONValue.parse(missing.body)["error"], "not_found")
        XCTAssertEqual(missing.header("Access-Control-Allow-Origin"), "*")
        XCTAssertEqual(missing.header("X-Content-Type-Options"), "nosniff")
    }

    func testSeveralRoutersPerMountAreTriedInOrder() {
        var federation = Router<String>()
        federation.get("/fetch") { _, _, _ in .text("federation") }
        var issuer = Router<String>()
        issuer.get("/fetch") { _, _, _ in .text("shadowed") }
        issuer.post("/credential", policy: .perClient) { _, _, _ in .text("issuer") }
        let site = Site(baseURL: Self.base, mounts: [.init(url: "\(Self.base)/e", context: "e", routers: [federation, issuer])])
        let fetch = site.respond(to: HTTPRequest(method: .get, path: "/e/fetch"))
        XCTAssertEqual(fetch.body, Array("federation".utf8))
        let credential = site.respond(to: HTTPRequest(method: .post, path: "/e/credential"))
        XCTAssertEqual(credential.body, Array("issuer".utf8))
        XCTAssertEqual(credential.header("Cache-Control"), "no-store")
    }

    /// 100,000 mounts on 100,000 hosts plus as many under the base URL: lookups stay right and
    /// cost what they cost with ten (dictionary lookups, no scan).
    func testHundredThousandMounts() {
        let urls = (0..<100_000).flatMap { ["\(Self.base)/e\($0)", "https://h\($0).example/x/e\($0)"] }
        let big = Self.site(urls)
        let small = Self.site(Array(urls.prefix(10)))
        XCTAssertEqual(get(big, "/e99999/fetch")?["mount"], .string("\(Self.base)/e99999"))
        XCTAssertEqual(get(big, "/x/e5/fetch", ["host": "h5.example", "x-forwarded-proto": "https"])?["mount"], "https://h5.example/x/e5")
        XCTAssertEqual(get(big, "/.well-known/openid-credential-issuer/e77")?["mount"], .string("\(Self.base)/e77"))
        func time(_ site: Site<String>) -> Double {
            let request = HTTPRequest(method: .get, path: "/e3/a/b/c/d/e", headers: ["host": "127.0.0.1:8080"])
            let start = Date()
            for _ in 0..<20_000 { _ = site.mount(for: request) }
            return Date().timeIntervalSince(start)
        }
        _ = time(small)
        let (smallTime, bigTime) = (time(small), time(big))
        XCTAssertLessThan(bigTime, smallTime * 5 + 0.05, "lookup cost grew with the number of mounts: \(smallTime) → \(bigTime)")
    }
}
