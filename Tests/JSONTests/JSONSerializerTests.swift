import Foundation
import JSON
import XCTest

/// The serializer skips eight plain bytes at a time; escapes must come out the same wherever
/// they fall in a word, next to non-ASCII bytes too.
final class JSONStringEscapeTests: XCTestCase {
    func testEscapesAtEveryOffsetMatchAByteAtATimeReference() throws {
        let specials: [Character] = ["\"", "\\", "\n", "\u{01}", "\u{1F}", " ", "ä", "€", "\u{7F}", "a", "/"]
        var generator = SystemRandomNumberGenerator()
        for length in 0..<40 {
            for _ in 0..<20 {
                let s = String((0..<length).map { _ in specials.randomElement(using: &generator)! })
                XCTAssertEqual(JSONValue.string(s).bytes, reference(s), "for \(Array(s.utf8))")
                XCTAssertEqual(try JSONValue.parse(JSONValue.string(s).bytes), .string(s))
            }
        }
    }

    /// Plain runs long enough for the sixteen-byte step, with one escape (or non-ASCII
    /// character) at every position: the step must stop exactly where a word needs escaping.
    func testOneEscapeAtEveryPositionOfPlainRuns() throws {
        for special in ["\"", "\\", "\n", "\u{1F}", "é"] {
            for length in 1..<48 {
                for at in 0..<length {
                    let s = String(repeating: "a", count: at) + special + String(repeating: "b", count: length - at - 1)
                    XCTAssertEqual(JSONValue.string(s).bytes, reference(s), "\(special.debugDescription) at \(at) of \(length)")
                }
            }
        }
    }

    /// `needsNoEscape` agrees with the serializer: true exactly when the string is written as
    /// itself between quotes, wherever in a word an escape falls.
    func testNeedsNoEscapeAgreesWithTheSerializer() {
        for special in ["\"", "\\", "\n", "\u{1F}", "é", "/", "\u{7F}"] {
            for length in 1..<40 {
                for at in 0..<length {
                    let s = String(repeating: "a", count: at) + special + String(repeating: "b", count: length - at - 1)
                    XCTAssertEqual(JSONValue.needsNoEscape(s), JSONValue.string(s).bytes == [0x22] + Array(s.utf8) + [0x22],
                                   "\(special.debugDescription) at \(at) of \(length)")
                }
            }
        }
        XCTAssertTrue(JSONValue.needsNoEscape(""))
    }

    /// `plainStringObject` writes the serializer's bytes for sorted plain members, and gives
    /// nil (never other bytes) when a name or value needs an escape.
    func testPlainStringObjectMatchesTheSerializer() {
        let members = [(name: "alg", value: "ES256"), (name: "kid", value: "k-1_ä"), (name: "typ", value: "entity-statement+jwt")]
        let object = JSONValue.object(Dictionary(uniqueKeysWithValues: members.map { ($0.name, JSONValue.string($0.value)) }))
        XCTAssertEqual(JSONValue.plainStringObject(members), object.bytes)
        XCTAssertEqual(JSONValue.plainStringObject([]), JSONValue.object([:]).bytes)
        XCTAssertNil(JSONValue.plainStringObject([(name: "kid", value: "a\"b")]))
        XCTAssertNil(JSONValue.plainStringObject([(name: "k\\", value: "v")]))
        XCTAssertNil(JSONValue.plainStringObject([(name: "alg", value: "ok"), (name: "kid", value: "line\n")]))
    }

    private func reference(_ s: String) -> [UInt8] {
        var out: [UInt8] = [0x22]
        for b in s.utf8 {
            switch b {
            case 0x22: out += Array("\\\"".utf8)
            case 0x5C: out += Array("\\\\".utf8)
            case 0x0A: out += Array("\\n".utf8)
            case 0x0D: out += Array("\\r".utf8)
            case 0x09: out += Array("\\t".utf8)
            case 0..<0x20: out += Array(String(format: "\\u%04x", b).utf8)
            default: out.append(b)
            }
        }
        return out + [0x22]
    }
}

/// The parser finds the end of a string eight bytes at a time and builds escape-free strings in
/// one go; quotes, backslashes, control bytes and bad UTF-8 must be caught wherever they fall.
final class JSONStringParseTests: XCTestCase {
    func testStringsAtEveryOffsetParseLikeFoundation() throws {
        let pieces = ["a", "ä", "€", "😀", "\\\"", "\\\\", "\\n", "\\u00e4", "\\ud83d\\ude00", "/", "\u{7F}"]
        var generator = SystemRandomNumberGenerator()
        for length in 0..<40 {
            for _ in 0..<20 {
                let text = "[\"" + (0..<length).map { _ in pieces.randomElement(using: &generator)! }.joined() + "\"]"
                let expected = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String]
                XCTAssertEqual(try JSONValue.parse(text), .array([.string(expected![0])]), text)
            }
        }
    }

    func testBadBytesInAStringAreRefusedAtEveryOffset() {
        for prefix in 0..<20 {
            let plain = Array(repeating: UInt8(ascii: "x"), count: prefix)
            for bad: [UInt8] in [[0x0A], [0x00], [0x1F], [0xFF], [0xC3], [0xED, 0xA0, 0x80], [0x5C, 0x78]] {
                for suffix in [0, 9] {
                    let bytes = [0x22] + plain + bad + Array(repeating: UInt8(ascii: "y"), count: suffix) + [0x22]
                    XCTAssertThrowsError(try JSONValue.parse(bytes), "\(bytes)")
                }
            }
            // Unterminated, in the fast scan and after an escape.
            XCTAssertThrowsError(try JSONValue.parse([0x22] + plain))
            XCTAssertThrowsError(try JSONValue.parse([0x22] + plain + [0x5C, 0x6E]))
        }
    }
}
