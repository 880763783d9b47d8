import XCTest
@testable import CBOR

/// RFC 8949 Appendix A, Table 6 ("Examples of Encoded CBOR Data Items"), transcribed from the
/// RFC. Bignums (tags 2/3) and epoch dates (tag 1) are plain tags to this codec.
final class RFC8949ExampleTests: XCTestCase {
    /// Items whose preferred (and deterministic) encoding is the RFC's: encode and decode.
    static let canonical: [(CBORValue, String)] = [
        (0, "00"), (1, "01"), (10, "0a"), (23, "17"), (24, "1818"), (25, "1819"), (100, "1864"),
        (1000, "1903e8"), (1_000_000, "1a000f4240"), (1_000_000_000_000, "1b000000e8d4a51000"),
        (.unsigned(18_446_744_073_709_551_615), "1bffffffffffffffff"),
        (.tagged(2, .bytes([1, 0, 0, 0, 0, 0, 0, 0, 0])), "c249010000000000000000"),
        (.negative(18_446_744_073_709_551_615), "3bffffffffffffffff"),
        (.tagged(3, .bytes([1, 0, 0, 0, 0, 0, 0, 0, 0])), "c349010000000000000000"),
        (-1, "20"), (-10, "29"), (-100, "3863"), (-1000, "3903e7"),
        (0.0, "f90000"), (.float(-0.0), "f98000"), (1.0, "f93c00"), (1.1, "fb3ff199999999999a"),
        (1.5, "f93e00"), (65504.0, "f97bff"), (100000.0, "fa47c35000"),
        (3.4028234663852886e+38, "fa7f7fffff"), (1.0e+300, "fb7e37e43c8800759c"),
        (5.960464477539063e-8, "f90001"), (0.00006103515625, "f90400"), (-4.0, "f9c400"),
        (-4.1, "fbc010666666666666"), (.float(.infinity), "f97c00"), (.float(-.infinity), "f9fc00"),
        (false, "f4"), (true, "f5"), (nil, "f6"), (.undefined, "f7"), (.simple(16), "f0"), (.simple(255), "f8ff"),
        (.tagged(0, "2013-03-21T20:04:00Z"), "c074323031332d30332d32315432303a30343a30305a"),
        (.tagged(1, 1_363_896_240), "c11a514b67b0"),
        (.tagged(1, 1_363_896_240.5), "c1fb41d452d9ec200000"),
        (.tagged(23, .bytes([1, 2, 3, 4])), "d74401020304"),
        (.tagged(24, .bytes([0x64, 0x49, 0x45, 0x54, 0x46])), "d818456449455446"),
        (.tagged(32, "http://www.example.com"), "d82076687474703a2f2f7777772e6578616d706c652e636f6d"),
        (.bytes([]), "40"), (.bytes([1, 2, 3, 4]), "4401020304"),
        ("", "60"), ("a", "6161"), ("IETF", "6449455446"), ("\"\\", "62225c"), ("\u{00fc}", "62c3bc"),
        ("\u{6c34}", "63e6b0b4"), ("\u{10151}", "64f0908591"),
        ([], "80"), ([1, 2, 3], "83010203"), ([1, [2, 3], [4, 5]], "8301820203820405"),
        (.array((1...25).map { CBORValue($0) }), "98190102030405060708090a0b0c0d0e0f101112131415161718181819"),
        ([:], "a0"), ([1: 2, 3: 4], "a201020304"), (["a": 1, "b": [2, 3]], "a26161016162820203"),
        (["a", ["b": "c"]], "826161a161626163"),
        (["a": "A", "b": "B", "c": "C", "d": "D", "e": "E"], "a56161614161626142616361436164614461656145"),
    ]

    /// Items the RFC also writes in non-preferred forms (wider floats, indefinite lengths):
    /// they decode to the value, which then encodes deterministically.
    static let decodeOnly: [(String, CBORValue)] = [
        ("fa7f800000", .float(.infinity)), ("faff800000", .float(-.infinity)),
        ("fb7ff0000000000000", .float(.infinity)), ("fbfff0000000000000", .float(-.infinity)),
        ("5f42010243030405ff", .bytes([1, 2, 3, 4, 5])),
        ("7f657374726561646d696e67ff", "streaming"),
        ("9fff", []),
        ("9f018202039f0405ffff", [1, [2, 3], [4, 5]]),
        ("9f01820203820405ff", [1, [2, 3], [4, 5]]),
        ("83018202039f0405ff", [1, [2, 3], [4, 5]]),
        ("83019f0203ff820405", [1, [2, 3], [4, 5]]),
        ("9f0102030405060708090a0b0c0d0e0f101112131415161718181819ff", .array((1...25).map { CBORValue($0) })),
        ("bf61610161629f0203ffff", ["a": 1, "b": [2, 3]]),
        ("826161bf61626163ff", ["a", ["b": "c"]]),
        ("bf6346756ef563416d7421ff", ["Fun": true, "Amt": -2]),
    ]

    func testCanonicalExamplesEncodeAndDecode() throws {
        for (value, hex) in Self.canonical {
            XCTAssertEqual(hexString(value.encoded()), hex, "encode \(value)")
            XCTAssertEqual(try CBORValue.decode(bytes(hex)), value, "decode \(hex)")
        }
    }

    func testNonPreferredExamplesDecode() throws {
        for (hex, value) in Self.decodeOnly {
            XCTAssertEqual(try CBORValue.decode(bytes(hex)), value, "decode \(hex)")
        }
    }

    func testNaNInEveryWidthDecodesAndEncodesAsHalf() throws {
        for hex in ["f97e00", "fa7fc00000", "fb7ff8000000000000"] {
            let v = try CBORValue.decode(bytes(hex))
            XCTAssertTrue(v.doubleValue?.isNaN == true, hex)
            XCTAssertEqual(hexString(v.encoded()), "f97e00")
        }
    }

    func testSortedMapExampleKeepsLiteralOrderButEncodesSorted() throws {
        // RFC example {_ "Fun": true, "Amt": -2}: decoded order is kept; encoding sorts keys.
        let v = try CBORValue.decode(bytes("bf6346756ef563416d7421ff"))
        XCTAssertEqual(v.mapValue?.map(\.key), ["Fun", "Amt"])
        XCTAssertEqual(hexString(v.encoded()), "a263416d74216346756ef5")
    }
}

func bytes(_ hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var it = hex.utf8.makeIterator()
    func nibble(_ c: UInt8) -> UInt8 { c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x61 + 10 }
    while let a = it.next(), let b = it.next() { out.append(nibble(a) << 4 | nibble(b)) }
    return out
}

func hexString(_ b: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    return String(b.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xf)]] })
}
