import XCTest
@testable import JSON

final class JSONValueTests: XCTestCase {
    func testRoundTripSortsKeysAndKeepsIntegers() throws {
        let v = try JSONValue.parse(#"{"b":[1,2.5,"x\u00e9\ud83d\ude00"],"a":{"n":null,"t":true},"u":"https://x/y"}"#)
        XCTAssertEqual(v.serialized(), #"{"a":{"n":null,"t":true},"b":[1,2.5,"xé😀"],"u":"https://x/y"}"#)
        XCTAssertEqual(v["b"]?.arrayValue?.first, .int(1))
    }

    func testRejectsMalformedInput() {
        for bad in ["", "{", "[1,]", "{\"a\":1,}", "01", "1.", "\"\\x\"", "{\"a\":1,\"a\":2}", "[1] x", "\"\u{01}\"", "nul", "\"\\ud800\""] {
            XCTAssertThrowsError(try JSONValue.parse(bad), bad)
        }
    }

    func testDepthIsBounded() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        XCTAssertThrowsError(try JSONValue.parse(deep)) { XCTAssertEqual($0 as? JSONParseError, .tooDeep) }
    }

    func testNumbersCompareByValue() {
        XCTAssertTrue(JSONValue.int(1).jsonEquals(.double(1.0)))
        XCTAssertEqual(JSONValue.double(3.0).intValue, 3)
        XCTAssertNil(JSONValue.double(3.5).intValue)
    }
}
