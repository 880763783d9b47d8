@testable import Issuance
import JSON
import XCTest

/// SplicedJSON must give exactly the JSON writer's bytes, whatever the fragments hold.
final class SplicedJSONTests: XCTestCase {
    func testStringFragmentIsTheWritersSerialization() {
        let strings = [
            "", "a", "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJ4In0.c2lnbmF0dXJl~WyJzYWx0IiwibmFtZSIsInZhbHVlIl0~",
            String(repeating: "A-_.~", count: 1_500), "quote \" inside a longer string", "backslash \\ here",
            "line\nbreak", "tab\tand control \u{1}", "Zoë Ünal 日本 — non-ASCII needs no escape", "\u{1F}", "1234567\"",
        ]
        for s in strings {
            XCTAssertEqual(SplicedJSON.Fragment(string: s).text, JSONValue.string(s).bytes, s)
        }
    }

    /// The credential response, written directly: the writer's bytes, escapes included, and
    /// any other shape serialized by the writer itself.
    func testCredentialResponseIsTheWritersSerialization() {
        let sdJWT = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJ4In0.c2lnbmF0dXJl~WyJzYWx0IiwibmFtZSIsInZhbHVlIl0~"
        let bodies: [JSONValue] = [
            ["credentials": [["credential": .string(sdJWT)], ["credential": "omdkb2NUeXBl"]], "notification_id": "n-1"],
            ["credentials": [["credential": "needs \" and \\ and \u{1} escaped"]], "notification_id": "n\"2"],
            ["credentials": [], "notification_id": "n-3"],
            ["credentials": [["credential": .string(sdJWT), "extra": 1]], "notification_id": "n-4"],
            ["credentials": [["credential": .string(sdJWT)]], "notification_id": "n-5", "more": true],
            ["transaction_id": "t", "interval": 5],
        ]
        for json in bodies { XCTAssertEqual(PIDProvider.credentialsBody(json), json.bytes, json.serialized()) }
    }

    func testSplicedBytesEqualTheValuesBytes() {
        let big = String(repeating: "eyJ0eXAiOiJkYytzZC1qd3QifQ", count: 300)
        let fragments = [SplicedJSON.Fragment(string: big), SplicedJSON.Fragment(["b": [1, 2], "a": "x\"y", "c": .null]),
                         SplicedJSON.Fragment(string: "needs \\ escape")]
        let spliced = SplicedJSON(fragments: fragments) { values in
            ["z": values[0], "notification_id": "n", "credentials": .array([["credential": values[2]], ["claims": values[1]]])]
        }
        XCTAssertEqual(spliced.bytes, spliced.value.bytes)
        XCTAssertEqual(spliced.value["z"], .string(big))
        XCTAssertEqual(SplicedJSON(fragments: []) { _ in ["a": 1] }.bytes, JSONValue.object(["a": 1]).bytes)
    }

    /// A body that already holds a marker's text, before the slot (key "0" sorts first), falls
    /// back to the writer rather than copying the fragment into the wrong place.
    func testMarkerInTheBodyFallsBackToTheWriter() {
        let spliced = SplicedJSON(fragments: [SplicedJSON.Fragment(string: "value")]) { values in
            ["a": values[0], "0": .string("\u{1}spliced 0\u{1}")]
        }
        XCTAssertEqual(spliced.bytes, spliced.value.bytes)
        XCTAssertEqual(spliced.value["a"], "value")
    }
}
