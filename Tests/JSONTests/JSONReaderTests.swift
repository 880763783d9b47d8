import XCTest
@testable import JSON

final class JSONReaderTests: XCTestCase {
    private func reader(_ text: String) throws -> JSONReader { try JSONReader(JSONValue.parse(text)) }

    /// The description of the error `body` throws.
    private func failure<T>(_ body: () throws -> T, file: StaticString = #filePath, line: UInt = #line) -> String? {
        do {
            _ = try body()
            XCTFail("no error", file: file, line: line)
            return nil
        } catch let error as JSONReadError {
            return error.description
        } catch {
            XCTFail("unexpected \(error)", file: file, line: line)
            return nil
        }
    }

    func testReadsTypedMembers() throws {
        let r = try reader(#"{"s":"x","i":3,"f":2.0,"d":1.5,"b":true,"o":{"a":["p","q"]},"u":"https://a.example:8443/x?y#z"}"#)
        XCTAssertEqual(try r.string("s"), "x")
        XCTAssertEqual(try r.int("i"), 3)
        XCTAssertEqual(try r.int("f"), 2, "a float without fraction is an integer")
        XCTAssertEqual(try r.double("d"), 1.5)
        XCTAssertEqual(try r.bool("b"), true)
        XCTAssertEqual(try r.object("o").stringArray("a"), ["p", "q"])
        XCTAssertEqual(try r.url("u"), "https://a.example:8443/x?y#z")
        XCTAssertNil(try r.optionalString("absent"))
        XCTAssertNil(try r.optionalObject("absent"))
        XCTAssertEqual(r.members.map(\.name), ["b", "d", "f", "i", "o", "s", "u"])
    }

    func testErrorsNameThePathOfTheBadField() throws {
        let r = try reader(#"{"metadata":{"openid_relying_party":{"client_name":5}},"authority_hints":["a","b",7],"n":null}"#)
        XCTAssertEqual(failure { try r.object("metadata").object("openid_relying_party").string("client_name") },
                       "metadata.openid_relying_party.client_name: expected a string, found number")
        XCTAssertEqual(failure { try r.stringArray("authority_hints") }, "authority_hints[2]: expected a string, found number")
        XCTAssertEqual(failure { try r.object("metadata").string("iss") }, "metadata.iss: is required")
        XCTAssertEqual(failure { try r.optionalString("n") }, "n: expected a string, found null", "null is not absent")
        XCTAssertEqual(failure { try JSONReader(JSONValue.array([])) }, "(document): expected an object, found array")
        // A field's path is worked out when asked for; it must name the member or element.
        XCTAssertEqual(try r.object("metadata").field("openid_relying_party").path, JSONPath("metadata", "openid_relying_party"))
        XCTAssertEqual(try r.array("authority_hints")[1].path, JSONPath(components: [.member("authority_hints"), .index(1)]))
        XCTAssertEqual(r.optionalField("n")?.path, JSONPath("n"))
        XCTAssertEqual(JSONField(.null, path: JSONPath("x")).path, JSONPath("x"))
    }

    func testMemberNamesThatAreNotIdentifiersAreQuoted() throws {
        let r = try reader(#"{"trust_mark_issuers":{"https://m.example/a.b":["x",1]}}"#)
        let byType = try r.object("trust_mark_issuers")
        XCTAssertEqual(failure { try byType.members.map { try $0.field.stringArray() } },
                       #"trust_mark_issuers["https://m.example/a.b"][1]: expected a string, found number"#)
        XCTAssertEqual(JSONPath("a", "1b").description, #"a["1b"]"#)
    }

    func testIntegersRejectFractionsAndOtherTypes() throws {
        let r = try reader(#"{"a":1.5,"b":"1"}"#)
        XCTAssertEqual(failure { try r.int("a") }, "a: expected an integer, found a fraction")
        XCTAssertEqual(failure { try r.int("b") }, "b: expected an integer, found string")
    }

    func testNonEmptyChecks() throws {
        let r = try reader(#"{"a":[],"s":""}"#)
        XCTAssertEqual(failure { try r.stringArray("a", nonEmpty: true) }, "a: must not be an empty array")
        XCTAssertEqual(try r.stringArray("a"), [])
        XCTAssertEqual(failure { try r.nonEmptyString("s") }, "s: must not be empty")
    }

    func testURLShapes() throws {
        for good in ["https://a.example", "http://127.0.0.1:8080/ta", "https://[::1]:8443/x", "HTTPS://A.example/"] {
            XCTAssertNoThrow(try JSONField(.string(good), path: JSONPath("u")).url(), good)
        }
        let bad: [(String, JSONField.URLRule)] = [
            ("/relative", .httpOrHTTPS), ("ftp://a.example", .httpOrHTTPS), ("https://", .httpOrHTTPS),
            ("https://a.example:port", .httpOrHTTPS), ("https://a example", .httpOrHTTPS), ("https:///path", .httpOrHTTPS),
            ("http://a.example", .https), ("https://a.example/?q=1", .identifier), ("https://a.example#f", .identifier),
            ("https://u@a.example", .identifier),
        ]
        for (url, rule) in bad {
            XCTAssertThrowsError(try JSONField(.string(url), path: JSONPath("u")).url(rule), url) {
                XCTAssertEqual(($0 as? JSONReadError)?.path, JSONPath("u"))
            }
        }
        XCTAssertEqual(failure { try JSONField(.string("ftp://x"), path: JSONPath("source_endpoint")).url() },
                       "source_endpoint: must be an http or https URL")
    }

    func testRejectUnknownNamesTheFirstUnknownMember() throws {
        let r = try reader(#"{"a":1,"zz":2,"b":3}"#)
        XCTAssertNoThrow(try r.rejectUnknown(allowed: ["a", "b", "zz"]))
        XCTAssertEqual(failure { try r.rejectUnknown(allowed: ["a"]) }, "b: is not a known member")
    }

    func testArrayElementsCarryTheirIndex() throws {
        let r = try reader(#"{"marks":[{"t":"x"},{"t":2}]}"#)
        XCTAssertEqual(failure { try r.array("marks").map { try $0.object().string("t") } }, "marks[1].t: expected a string, found number")
        let nested = JSONReader(["x": 1], path: JSONPath("claims"))
        XCTAssertEqual(nested.invalid("x", "is odd").description, "claims.x: is odd")
    }
}
