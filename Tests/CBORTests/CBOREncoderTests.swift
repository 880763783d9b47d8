import XCTest
@testable import CBOR

final class CBOREncoderTests: XCTestCase {
    func testMapKeysAreSortedByTheirEncodedBytes() {
        // RFC 8949 §4.2.1: bytewise lexicographic order of the encoded keys, so shorter encodings
        // first and then by byte value: 10, 100, -1, "z", "aa", [100], [-1], false.
        let map: CBORValue = [false: 8, [-1]: 7, [100]: 6, "aa": 5, "z": 4, -1: 3, 100: 2, 10: 1]
        XCTAssertEqual(hexString(map.encoded()), "a8" + "0a01" + "186402" + "2003" + "617a04" + "62616105"
                       + "81186406" + "812007" + "f408")
    }

    func testEqualMapsInAnyOrderEncodeIdentically() {
        let a: CBORValue = ["family_name": "Mustermann", "given_name": "Erika", "age_over_18": true]
        let b: CBORValue = ["age_over_18": true, "given_name": "Erika", "family_name": "Mustermann"]
        XCTAssertEqual(a.encoded(), b.encoded())
    }

    func testDuplicateKeysInABuiltMapKeepTheLast() {
        let v: CBORValue = .map([CBORMapEntry("a", 1), CBORMapEntry("b", 2), CBORMapEntry("a", 3)])
        XCTAssertEqual(hexString(v.encoded()), "a2616103616202")
    }

    /// Maps with only integer and text keys are ordered without encoding their keys; the
    /// result must be the bytewise order of the encoded keys (the reference below), with the
    /// last of equal keys kept, across head-width boundaries, UTF-8 and duplicates.
    func testIntegerAndTextKeyOrderMatchesEncodedKeyOrder() {
        var generator = SystemRandomNumberGenerator()
        let numbers: [UInt64] = [0, 1, 23, 24, 25, 255, 256, 65535, 65536, 4_294_967_295, 4_294_967_296, .max]
        let texts = ["", "a", "b", "z", "aa", "ab", "é", "ü", "zz", String(repeating: "x", count: 23),
                     String(repeating: "x", count: 24), String(repeating: "y", count: 256), "elementIdentifier", "random"]
        func key() -> CBORValue {
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: return .unsigned(numbers.randomElement(using: &generator)!)
            case 1: return .negative(numbers.randomElement(using: &generator)!)
            default: return .text(texts.randomElement(using: &generator)!)
            }
        }
        for round in 0..<500 {
            let entries = (0..<Int.random(in: 0...12, using: &generator)).map { i in CBORMapEntry(key(), .unsigned(UInt64(i))) }
            // Reference: sort by encoded key bytes, stable, keep the last of equal keys.
            var keyed = entries.enumerated().map { (key: $0.element.key.encoded(), index: $0.offset) }
            keyed.sort { $0.key == $1.key ? $0.index < $1.index : $0.key.lexicographicallyPrecedes($1.key) }
            var kept: [(key: [UInt8], index: Int)] = []
            for entry in keyed {
                if let last = kept.last, last.key == entry.key { kept[kept.count - 1] = entry } else { kept.append(entry) }
            }
            var expected: [UInt8] = []
            CBORValue.writeHead(5, UInt64(kept.count), into: &expected)
            for (key, index) in kept { expected += key + entries[index].value.encoded() }
            XCTAssertEqual(CBORValue.map(entries).encoded(), expected, "round \(round): \(entries)")
        }
    }

    func testHeadsAreShortestAtEveryBoundary() {
        let cases: [(CBORValue, String)] = [
            (23, "17"), (24, "1818"), (255, "18ff"), (256, "190100"), (65535, "19ffff"), (65536, "1a00010000"),
            (4_294_967_295, "1affffffff"), (4_294_967_296, "1b0000000100000000"),
            (-24, "37"), (-25, "3818"), (-256, "38ff"), (-257, "390100"),
            (.bytes([UInt8](repeating: 0, count: 24)), "5818" + String(repeating: "00", count: 24)),
        ]
        for (v, hex) in cases { XCTAssertEqual(hexString(v.encoded()), hex, "\(v)") }
    }

    func testFloatsUseTheShortestExactWidth() {
        let cases: [(Double, String)] = [
            (0.5, "f93800"), (65504, "f97bff"), (65505, "fa477fe100"), (1.0 / 3.0, "fb3fd5555555555555"),
            (Double(Float(0.1)), "fa3dcccccd"), (6.103515625e-05, "f90400"), (6.0975551605224609375e-05, "f903ff"),
            (5.9604644775390625e-08, "f90001"), (2.98023223876953125e-08, "fa33000000"), (131072, "fa48000000"),
            (-65504, "f9fbff"),
        ]
        for (d, hex) in cases {
            XCTAssertEqual(hexString(CBORValue.float(d).encoded()), hex, "\(d)")
            XCTAssertEqual(try CBORValue.decode(bytes(hex)), .float(d), hex)
        }
    }

    func testEveryHalfPrecisionValueRoundTrips() throws {
        // All 63,488 finite halves (and ±infinity): decode to Double, re-encode to the same two bytes.
        for bits in UInt16.min...UInt16.max where bits & 0x7c00 != 0x7c00 || bits & 0x03ff == 0 {
            let encoded: [UInt8] = [0xf9, UInt8(bits >> 8), UInt8(bits & 0xff)]
            let value = try CBORValue.decode(encoded)
            XCTAssertEqual(value.encoded(), encoded, "half 0x\(String(bits, radix: 16))")
        }
    }

    func testRoundTripOfANestedDocument() throws {
        let doc: CBORValue = [
            "version": "1.0",
            "digestAlgorithm": "SHA-256",
            "valueDigests": ["eu.europa.ec.eudi.pid.1": [0: .bytes([1, 2, 3]), 1: .bytes([4, 5, 6])]],
            "validityInfo": ["signed": .dateTime(1_700_000_000), "validUntil": .dateTime(1_731_536_000)],
            "nested": [[[1.5, -2, .undefined, .simple(99), nil]], .tagged(1004, "1990-01-01")],
        ]
        let bytes = doc.encoded()
        let decoded = try CBORValue.decode(bytes)
        XCTAssertEqual(decoded.encoded(), bytes)
        XCTAssertEqual(decoded["validityInfo"]?["signed"]?.dateTimeValue, 1_700_000_000)
    }

    func testDiagnosticNotation() {
        let v: CBORValue = ["a": [1, -2, .bytes([0xde, 0xad])], 3: .tagged(24, .bytes([0])), "q\"": 1.5]
        XCTAssertEqual(v.description, #"{"a": [1, -2, h'dead'], 3: 24(h'00'), "q\"": 1.5}"#)
        XCTAssertEqual(CBORValue.negative(.max).description, "-18446744073709551616")
    }
}
