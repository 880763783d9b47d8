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
