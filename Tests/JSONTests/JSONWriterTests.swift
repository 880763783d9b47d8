import JSON
import XCTest

/// The writer every JSON text goes through: separators at every nesting, members in the order
/// written, strings escaped as RFC 8259 §7 asks, and, members written in sorted order, exactly
/// the bytes of the matching `JSONValue`.
final class JSONWriterTests: XCTestCase {
    private func text(_ write: (inout JSONWriter) -> Void, pretty: Bool = false) -> String {
        var writer = JSONWriter(pretty: pretty)
        write(&writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    func testMembersComeOutInTheOrderWritten() {
        let out = text { w in
            w.openObject()
            w.member("z", "last written first")
            w.member("a", 1)
            w.member("m", true)
            w.name("n"); w.null()
            w.closeObject()
        }
        XCTAssertEqual(out, #"{"z":"last written first","a":1,"m":true,"n":null}"#)
    }

    func testSeparatorsAtEveryNesting() {
        let out = text { w in
            w.openArray()
            w.openObject(); w.closeObject()
            w.openArray(); w.closeArray()
            w.openObject()
            w.name("a"); w.openArray(); w.int(1); w.openArray(); w.int(2); w.int(3); w.closeArray(); w.int(4); w.closeArray()
            w.name("b"); w.openObject(); w.member("c", strings: ["x", "y"]); w.closeObject()
            w.member("d", -5)
            w.closeObject()
            w.string("tail")
            w.closeArray()
        }
        XCTAssertEqual(out, #"[{},[],{"a":[1,[2,3],4],"b":{"c":["x","y"]},"d":-5},"tail"]"#)
        XCTAssertNoThrow(try JSONValue.parse(Array(out.utf8)))
    }

    func testStringsAndNamesAreEscaped() {
        let out = text { w in
            w.openObject()
            w.member("q\"uote", "back\\slash \n\r\t \u{01}\u{1F} ä/€")
            w.closeObject()
        }
        XCTAssertEqual(out, #"{"q\"uote":"back\\slash \n\r\t \u0001\u001f ä/€"}"#)
        XCTAssertEqual(try JSONValue.parse(Array(out.utf8)), ["q\"uote": "back\\slash \n\r\t \u{01}\u{1F} ä/€"])
    }

    func testNumbers() {
        let out = text { w in
            w.openArray(); w.int(Int64.min); w.int(Int64.max); w.int(0); w.double(1.0); w.double(-2.5); w.double(1e20); w.closeArray()
        }
        XCTAssertEqual(out, "[-9223372036854775808,9223372036854775807,0,1,-2.5,1e+20]")
    }

    /// A fragment is copied as it was serialized; a value is written with sorted keys.
    func testFragmentsAndValues() {
        let claims: JSONValue = ["b": [1, "two"], "a": ["nested": .null]]
        let fragment = JSONFragment(claims)
        XCTAssertEqual(fragment.text, claims.bytes)
        let out = text { w in
            w.openObject()
            w.member("f", fragment)
            w.member("v", claims)
            w.closeObject()
        }
        XCTAssertEqual(out, #"{"f":{"a":{"nested":null},"b":[1,"two"]},"v":{"a":{"nested":null},"b":[1,"two"]}}"#)
    }

    /// Members written in sorted order give exactly `JSONValue.bytes`, the property response
    /// bodies rely on to stay the bytes they were.
    func testSortedMembersAreTheValuesBytes() {
        let value: JSONValue = [
            "access_token": "t\"k", "authorization_details": [["type": "openid_credential", "ids": ["1", "2"]]],
            "empty": [:], "expires_in": 600, "flag": false, "none": .null, "ratio": 0.5,
        ]
        let out = text { w in
            w.openObject()
            w.member("access_token", "t\"k")
            w.name("authorization_details")
            w.openArray(); w.openObject(); w.member("ids", strings: ["1", "2"]); w.member("type", "openid_credential"); w.closeObject()
            w.closeArray()
            w.name("empty"); w.openObject(); w.closeObject()
            w.member("expires_in", 600)
            w.member("flag", false)
            w.name("none"); w.null()
            w.name("ratio"); w.double(0.5)
            w.closeObject()
        }
        XCTAssertEqual(out, value.serialized())
    }

    /// The serializer is the writer: pretty output indents by two and puts a space after names.
    func testPrettyOutput() {
        let value: JSONValue = ["b": [1, [:], []], "a": ["c": "d"]]
        XCTAssertEqual(value.serialized(pretty: true), """
            {
              "a": {
                "c": "d"
              },
              "b": [
                1,
                {},
                []
              ]
            }
            """)
        XCTAssertEqual(try JSONValue.parse(value.encoded(pretty: true)), value)
    }

    /// `encode(appendingTo:)` appends to what the buffer holds already.
    func testEncodeAppends() {
        var out = Array("prefix ".utf8)
        JSONValue.array(["x", 1]).encode(appendingTo: &out)
        XCTAssertEqual(String(decoding: out, as: UTF8.self), #"prefix ["x",1]"#)
    }
}
