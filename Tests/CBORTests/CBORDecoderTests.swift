import XCTest
@testable import CBOR

final class CBORDecoderTests: XCTestCase {
    private func assertRejects(_ hex: String, _ expected: CBORDecodingError, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try CBORValue.decode(bytes(hex)), hex, file: file, line: line) {
            XCTAssertEqual($0 as? CBORDecodingError, expected, hex, file: file, line: line)
        }
    }

    func testTruncatedInputIsRejected() {
        for hex in ["", "18", "1903", "1a000f42", "1b000000e8d4a510", "f9", "fa7f80", "fb7ff0", "f8", "c0",
                    "828100", "a18100", "9f01", "bf6161", "5f4101", "7f", "d818"] {
            assertRejects(String(hex), .unexpectedEnd)
        }
        // A count the remaining bytes cannot hold fails before any element is read.
        assertRejects("8201", .lengthBeyondInput(offset: 0))
        assertRejects("a201", .lengthBeyondInput(offset: 0))
    }

    func testLengthsBeyondTheInputAreRejectedBeforeAllocating() {
        assertRejects("44010203", .lengthBeyondInput(offset: 0))
        assertRejects("5bffffffffffffffff", .lengthBeyondInput(offset: 0))
        assertRejects("7a7fffffff", .lengthBeyondInput(offset: 0))
        assertRejects("9bffffffffffffffff00", .lengthBeyondInput(offset: 0))
        assertRejects("bb000000000000000100", .lengthBeyondInput(offset: 0))
    }

    func testTrailingBytesAreRejected() {
        assertRejects("0000", .trailingData(offset: 1))
        assertRejects("8001", .trailingData(offset: 1))
    }

    func testReservedAndMisplacedHeadsAreRejected() {
        for hex in ["1c", "1d", "1e", "3c", "5c", "7d", "9e", "bc", "dc", "fc", "fd", "fe"] {
            assertRejects(hex, .invalidHead(offset: 0))
        }
        // Indefinite length is only for strings, arrays and maps (RFC 8949 §3.2.1).
        for hex in ["1f", "3f", "df00"] { assertRejects(hex, .invalidHead(offset: 0)) }
    }

    func testBreakOutsideIndefiniteItemIsRejected() {
        assertRejects("ff", .unexpectedBreak(offset: 0))
        assertRejects("81ff", .unexpectedBreak(offset: 1))
        assertRejects("a1ff01", .unexpectedBreak(offset: 1))
        assertRejects("bf01ff", .unexpectedBreak(offset: 2)) // a key without a value
    }

    func testIndefiniteStringChunksMustBeDefiniteAndOfTheSameType() {
        assertRejects("5f6161ff", .invalidChunk(offset: 1)) // text chunk in a byte string
        assertRejects("7f4161ff", .invalidChunk(offset: 1)) // byte chunk in a text string
        assertRejects("5f5f4101ffff", .invalidChunk(offset: 1)) // nested indefinite chunk
        assertRejects("7f01ff", .invalidChunk(offset: 1))
    }

    func testInvalidUTF8IsRejected() {
        assertRejects("61ff", .invalidUTF8(offset: 0))
        assertRejects("62c328", .invalidUTF8(offset: 0))
        assertRejects("63eda080", .invalidUTF8(offset: 0)) // an encoded surrogate
        // A character split across two chunks: each chunk must be valid on its own (§3.2.3).
        assertRejects("7f61c361bcff", .invalidUTF8(offset: 1))
    }

    func testTwoByteSimpleValuesBelow32AreRejected() {
        assertRejects("f800", .invalidSimpleValue(offset: 0))
        assertRejects("f81f", .invalidSimpleValue(offset: 0))
        XCTAssertEqual(try CBORValue.decode(bytes("f820")), .simple(32))
    }

    func testDuplicateMapKeysAreRejected() {
        assertRejects("a2616101616102", .duplicateKey(offset: 4))
        assertRejects("a201010102", .duplicateKey(offset: 3))
        // The same key in a different encoding (definite vs indefinite text) is still the same key.
        assertRejects("a261610d7f6161ff0e", .duplicateKey(offset: 4))
        // 1 and "1" differ.
        XCTAssertNoThrow(try CBORValue.decode(bytes("a2010161310e")))
    }

    func testNestingIsBounded() {
        let deepArrays = [UInt8](repeating: 0x81, count: 10_000) + [0x00]
        XCTAssertThrowsError(try CBORValue.decode(deepArrays)) { XCTAssertEqual($0 as? CBORDecodingError, .tooDeep) }
        let deepTags = [UInt8](repeating: 0xc0, count: 10_000) + [0x00]
        XCTAssertThrowsError(try CBORValue.decode(deepTags)) { XCTAssertEqual($0 as? CBORDecodingError, .tooDeep) }
        let ok = [UInt8](repeating: 0x81, count: CBORValue.maximumDepth) + [0x00]
        XCTAssertNoThrow(try CBORValue.decode(ok))
    }

    func testNonPreferredHeadsAreAcceptedOnInput() throws {
        // Senders need not be deterministic; the value is what counts.
        XCTAssertEqual(try CBORValue.decode(bytes("1800")), 0)
        XCTAssertEqual(try CBORValue.decode(bytes("1b0000000000000001")), 1)
        XCTAssertEqual(try CBORValue.decode(bytes("5800")), .bytes([]))
    }
}
