import JSON
import OAuth
import XCTest

/// Where an authorization response may go: loopback for anyone, registered URIs for public
/// clients, https and private-use schemes only with a client attestation.
final class RedirectURIRuleTests: XCTestCase {
    private let rule = RedirectURIRule(clients: [
        "wallet-dev": RegisteredClient(redirectURIs: ["eu.europa.ec.euidi://authorization"]),
        "web-wallet": RegisteredClient(redirectURIs: ["https://wallet.example/cb"]),
    ])

    private func permission(_ uri: String, client: String = "someone", attested: Bool = false) -> RedirectURIRule.Permission? {
        try? rule.check(uri, clientID: client, attested: attested)
    }

    func testLoopbackForEveryClient() {
        for uri in ["http://127.0.0.1/cb", "http://127.0.0.1:51004/cb?x=1", "http://[::1]:8080/cb", "http://localhost/cb",
                    "HTTP://LOCALHOST/cb", "http://localhost:8080"] {
            XCTAssertEqual(permission(uri), .loopback, uri)
            XCTAssertEqual(permission(uri, attested: true), .loopback, uri)
        }
    }

    /// The bypasses of the old prefix test and friends: refused for everyone, attested or not.
    func testEvilURIsAreRefusedForEveryone() {
        let evil = [
            "http://127.evil.example/cb", "http://evil.example\\@127.0.0.1/cb", "http://evil.example@127.0.0.1/cb",
            "http://127.0.0.1@evil.example/cb", "http://localhost.evil.example/", "http://127.0.0.1.evil/",
            "http://127.0.0.1:99999/", "http://%31%32%37.0.0.1/", "http://127.0.0.1#x", "http://127.0.0.1/cb#",
            "http://127.0.0.1/c b", "http://127.0.0.1/\tcb", "http://127.0.0.1/cb\n", "http://127.0.0.1/cb\r\n",
            " http://127.0.0.1/cb", "http://127.0.0.2/cb", "http://[::2]/cb", "http://evil.example/cb",
            "https://wallet.example/cb#frag", "https://user@wallet.example/cb", "https://%77allet.example/cb", "https:///cb",
            "javascript:alert(1)", "JavaScript://%0Aalert(1)", "data:text/html,x", "file:///etc/passwd", "vbscript:x",
            "/relative/cb", "//wallet.example/cb", "", "eu.europa.ec.euidi:", "https://wallet.example/" + String(repeating: "a", count: 2048),
        ]
        for uri in evil {
            XCTAssertNil(permission(uri), uri.debugDescription)
            XCTAssertNil(permission(uri, attested: true), uri.debugDescription)
        }
    }

    func testPublicClientsNeedARegistration() {
        XCTAssertNil(permission("https://wallet.example/cb"), "an unregistered public client may not use https")
        XCTAssertNil(permission("eu.europa.ec.euidi://authorization"))
        XCTAssertEqual(permission("eu.europa.ec.euidi://authorization", client: "wallet-dev"), .registered)
        XCTAssertEqual(permission("https://wallet.example/cb", client: "web-wallet"), .registered)
        // Exact string matching (RFC 9700 §2.1): no prefix, case or trailing-slash leeway.
        for near in ["https://wallet.example/cb/", "https://wallet.example/cb?x=1", "https://WALLET.example/cb",
                     "https://wallet.example/cbx", "https://wallet.example/cb/../evil"] {
            XCTAssertNil(permission(near, client: "web-wallet"), near)
        }
        XCTAssertNil(permission("https://wallet.example/cb", client: "wallet-dev"), "registered for another client")
        // An http refusal says why, as invalid_request.
        XCTAssertThrowsError(try rule.check("http://127.evil.example/cb", clientID: "x", attested: false)) { error in
            XCTAssertEqual((error as? OAuthError)?.code, .invalidRequest)
            XCTAssertTrue("\(error)".contains("loopback"), "\(error)")
        }
    }

    func testAttestedClientsKeepHTTPSAndPrivateUseSchemes() {
        XCTAssertEqual(permission("https://wallet.example/anything", attested: true), .attested)
        XCTAssertEqual(permission("eu.trustbed.test-wallet:/callback", attested: true), .attested)
        XCTAssertEqual(permission("eudi-openid4ci://authorize", attested: true), .attested)
        XCTAssertEqual(permission("eu.europa.ec.euidi://authorization", client: "wallet-dev", attested: true), .registered)
    }

    /// A registration is refused when no request could ever use it.
    func testRegisteredClientParse() throws {
        let good = try RegisteredClient.parse(try JSONReader(["redirect_uris": ["eu.europa.ec.euidi://authorization", "http://127.0.0.1/cb"]]))
        XCTAssertEqual(good.redirectURIs, ["eu.europa.ec.euidi://authorization", "http://127.0.0.1/cb"])
        let bad: [JSONValue] = [
            ["redirect_uris": []], ["redirect_uris": ["https://w.example/cb#f"]], ["redirect_uris": ["http://wallet.example/cb"]],
            ["redirect_uris": ["http://evil.example\\@127.0.0.1/"]], ["redirect_uris": ["javascript:x"]],
            ["redirect_uri": ["https://w.example/cb"]],
        ]
        for object in bad {
            XCTAssertThrowsError(try RegisteredClient.parse(try JSONReader(object)), "\(object)")
        }
    }
}
