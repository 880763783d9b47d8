@testable import Issuance
import JSON
import XCTest

/// Response bodies written directly must be exactly the JSON writer's bytes.
final class ResponseBodyBytesTests: XCTestCase {
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

    func testFragmentTextIsTheWritersSerialization() {
        let values: [JSONValue] = [["b": [1, 2], "a": "x\"y", "c": .null], "Zoë \u{1}", ["nested": ["deep": [true, 1.5]]]]
        for value in values { XCTAssertEqual(JSONFragment(value).text, value.bytes) }
    }
}
