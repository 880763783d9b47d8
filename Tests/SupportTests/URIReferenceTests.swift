import Support
import XCTest

/// RFC 3986 parsing: the Appendix B split, the authority, and the refusals that keep one
/// string from meaning two URLs to two readers.
final class URIReferenceTests: XCTestCase {
    func testComponents() throws {
        let uri = try URIReference(parsing: "HTTPS://user:pw@Example.COM:8443/a/b;c?x=1&y=%2F#frag/?")
        XCTAssertEqual(uri.scheme, "HTTPS")
        XCTAssertEqual(uri.normalizedScheme, "https")
        XCTAssertEqual(uri.userinfo, "user:pw")
        XCTAssertEqual(uri.host, "Example.COM")
        XCTAssertEqual(uri.normalizedHost, "example.com")
        XCTAssertEqual(uri.port, 8443)
        XCTAssertEqual(uri.path, "/a/b;c")
        XCTAssertEqual(uri.query, "x=1&y=%2F")
        XCTAssertEqual(uri.fragment, "frag/?")
        XCTAssertFalse(uri.isAbsolute, "a fragment makes it a URI reference, not an absolute URI")

        let v6 = try URIReference(parsing: "http://[::1]:8080/cb")
        XCTAssertEqual(v6.host, "[::1]")
        XCTAssertEqual(v6.port, 8080)
        XCTAssertTrue(v6.hasLoopbackHost)

        let custom = try URIReference(parsing: "eu.europa.ec.euidi://authorization")
        XCTAssertEqual(custom.scheme, "eu.europa.ec.euidi")
        XCTAssertEqual(custom.host, "authorization")
        XCTAssertEqual(custom.path, "")

        let noAuthority = try URIReference(parsing: "eu.trustbed.test-wallet:/callback")
        XCTAssertNil(noAuthority.host)
        XCTAssertEqual(noAuthority.path, "/callback")

        let emptyPort = try URIReference(parsing: "http://localhost:/x")
        XCTAssertNil(emptyPort.port)
        XCTAssertEqual(emptyPort.effectivePort, 80)
        XCTAssertEqual(try URIReference(parsing: "https://a.example").effectivePort, 443)

        let relative = try URIReference(parsing: "../a?q")
        XCTAssertNil(relative.scheme)
        XCTAssertEqual(relative.path, "../a")
    }

    /// Good and evil URIs: whether they parse, and whether the host is exactly a loopback one.
    func testLoopbackTable() {
        let table: [(String, parses: Bool, loopback: Bool)] = [
            ("http://127.0.0.1/cb", true, true),
            ("http://127.0.0.1:51004/cb?x=1", true, true),
            ("http://[::1]:8080/cb", true, true),
            ("http://localhost/cb", true, true),
            ("HTTP://LOCALHOST/cb", true, true),
            ("http://127.0.0.1#x", true, true),  // parses; the fragment is the redirect rule's business
            ("http://127.evil.example/cb", true, false),
            ("http://localhost.evil.example/", true, false),
            ("http://127.0.0.1.evil/", true, false),
            ("http://127.0.0.2/", true, false),
            ("http://127.1/", true, false),
            ("http://localhost./", true, false),
            ("http://[0:0:0:0:0:0:0:1]/", true, false),
            ("http://%31%32%37.0.0.1/", true, false),
            ("http://evil.example@127.0.0.1/cb", true, true),  // userinfo: refused by the redirect rule
            ("http://127.0.0.1@evil.example/cb", true, false),
            ("http://evil.example\\@127.0.0.1/cb", false, false),
            ("http://127.0.0.1:99999/", false, false),
            ("http://127.0.0.1:65536/", false, false),
            ("http://127.0.0.1:8o/", false, false),
            ("http://a@b@127.0.0.1/", false, false),
            ("http://[::1/", false, false),
            ("http://[::1]x/", false, false),
            ("http://[fe80::1%25eth0]/", false, false),
            ("http://[127.0.0.1]/", false, false),
            ("http://127.0.0.1/c b", false, false),
            ("http://127.0.0.1/\tcb", false, false),
            ("http://127.0.0.1/cb\n", false, false),
            ("http://127.0.0.1/cb\r\nLocation: x", false, false),
            (" http://127.0.0.1/cb", false, false),
            ("http://127.0.0.1/%zz", false, false),
            ("http://127.0.0.1/%4", false, false),
            ("http://127.0.0.1/é", false, false),
            ("http://127.0.0.1/<x>", false, false),
            ("http://127.0.0.1/a{b}", false, false),
            ("http://127.0.0.1/a[b]", false, false),
            ("1http://127.0.0.1/", false, false),
            ("ht_tp://127.0.0.1/", false, false),
        ]
        for (text, parses, loopback) in table {
            let uri = try? URIReference(parsing: text)
            XCTAssertEqual(uri != nil, parses, "parses: \(text.debugDescription)")
            XCTAssertEqual(uri?.hasLoopbackHost ?? false, loopback, "loopback: \(text.debugDescription)")
        }
    }

    func testPercentEncodedHostIsFlagged() throws {
        XCTAssertTrue(try URIReference(parsing: "http://%31%32%37.0.0.1/").hostIsPercentEncoded)
        XCTAssertFalse(try URIReference(parsing: "http://127.0.0.1/%41").hostIsPercentEncoded)
    }

    func testHostHeaderAuthority() throws {
        let plain = try URIAuthority(parsing: "LocalHost:8080")
        XCTAssertEqual(plain.host, "LocalHost")
        XCTAssertEqual(plain.port, 8080)
        XCTAssertTrue(plain.hasLoopbackHost)
        XCTAssertNil(plain.userinfo)
        XCTAssertEqual(try URIAuthority(parsing: "[::1]").host, "[::1]")
        XCTAssertFalse(try URIAuthority(parsing: "evil.example:8080").hasLoopbackHost)
        for bad in ["evil.example/x", "a b", "127.0.0.1:70000", "host:port", "[zz]", "x\\y"] {
            XCTAssertThrowsError(try URIAuthority(parsing: bad), bad)
        }
    }

    func testErrorsSayWhatIsWrong() {
        XCTAssertThrowsError(try URIReference(parsing: "http://evil.example\\@127.0.0.1/")) { error in
            XCTAssertTrue("\(error)".contains("\"\\\""), "\(error)")
        }
        XCTAssertThrowsError(try URIReference(parsing: "http://h/\t")) { error in
            XCTAssertTrue("\(error)".contains("0x9"), "\(error)")
        }
    }
}
