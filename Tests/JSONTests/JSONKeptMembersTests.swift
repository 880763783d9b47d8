import JSON
import XCTest

/// `parseObject(_:keeping:)` builds the kept members as `parse` does and refuses every document
/// `parse` refuses, whatever member it is malformed in.
final class JSONKeptMembersTests: XCTestCase {
    func testKeptMembersEqualTheFullParse() throws {
        let documents = [
            #"{"a": 1, "b": {"x": [1, 2.5, -3e2, true, false, null, {}, []]}, "c": "Zo\u00eb \"q\" \\ \/", "d": "Köln"}"#,
            #"{"d": [{"deep": {"deeper": ["\ud83d\ude00"]}}], "a": {"k": "v"}, "e": 12345678901234567890}"#,
            #" { } "#,
        ]
        for text in documents {
            let full = try XCTUnwrap(JSONValue.parse(text).objectValue)
            for names in [Set<String>(), ["a"], ["a", "c"], ["b", "d", "missing"], Set(full.keys)] {
                let kept = try JSONValue.parseObject(Array(text.utf8), keeping: names)
                XCTAssertEqual(kept, full.filter { names.contains($0.key) }, "\(text) keeping \(names)")
            }
        }
    }

    func testEveryDocumentParseRefusesIsRefused() {
        let refused = [
            #"{"a": 1, "b": [1, 2"#, #"{"a": 1, "b": "bad \x escape"}"#, #"{"a": 1, "b": [1e999]}"#,
            #"{"a": 1, "a": 2}"#, #"{"a": 1, "b": {"n": 1, "n": 2}}"#, #"{"a": 1, "b": [{"\u006e": 1, "n": 2}]}"#,
            "{\"a\": 1, \"b\": \"\u{1}\"}", #"{"a": 1, "b": "\ud800"}"#, #"{"a": 1} x"#, "",
            #"{"a": 1, "b": 01}"#, #"{"a": 1, "b": tru}"#,
            String(repeating: "[", count: 70) + String(repeating: "]", count: 70),
            "{\"b\": " + String(repeating: "[", count: 70) + String(repeating: "]", count: 70) + "}",
        ]
        for text in refused {
            let bytes = Array(text.utf8)
            XCTAssertThrowsError(try JSONValue.parse(bytes), text)
            XCTAssertThrowsError(try JSONValue.parseObject(bytes, keeping: ["a"]), text)
        }
        // Valid JSON, but not an object.
        for text in [#"[1, 2]"#, #""s""#, "7"] { XCTAssertThrowsError(try JSONValue.parseObject(Array(text.utf8), keeping: ["a"]), text) }
        // Invalid UTF-8 inside a skipped string.
        let invalid: [UInt8] = Array(#"{"a": 1, "b": ""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        XCTAssertThrowsError(try JSONValue.parse(invalid))
        XCTAssertThrowsError(try JSONValue.parseObject(invalid, keeping: ["a"]))
    }
}
