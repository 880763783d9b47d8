import XCTest
@testable import CBOR

final class CBORTagsAndFieldTests: XCTestCase {
    func testDateTimeIsUTCWithoutFractions() {
        XCTAssertEqual(CBORValue.dateTime(0), .tagged(0, "1970-01-01T00:00:00Z"))
        XCTAssertEqual(CBORValue.dateTime(1_363_896_240), .tagged(0, "2013-03-21T20:04:00Z"))
        XCTAssertEqual(CBORValue.dateTime(951_782_400), .tagged(0, "2000-02-29T00:00:00Z"))
        XCTAssertEqual(CBORValue.dateTime(-1), .tagged(0, "1969-12-31T23:59:59Z"))
        XCTAssertEqual(CBORValue.dateTime(253_402_300_799), .tagged(0, "9999-12-31T23:59:59Z"))
    }

    func testDateTimeParsingAppliesOffsetsAndDropsFractions() {
        func parse(_ s: String) -> Int64? { CBORValue.tagged(0, .text(s)).dateTimeValue }
        XCTAssertEqual(parse("2013-03-21T20:04:00Z"), 1_363_896_240)
        XCTAssertEqual(parse("2013-03-21T20:04:00.5Z"), 1_363_896_240)
        XCTAssertEqual(parse("2013-03-21T22:04:00+02:00"), 1_363_896_240)
        XCTAssertEqual(parse("2013-03-21t20:04:00z"), 1_363_896_240)
        for bad in ["2013-03-21T20:04:00", "2013-03-21 20:04:00Z", "2013-02-30T00:00:00Z", "2013-03-21T24:00:00Z",
                    "2013-03-21T20:04:00.Z", "2013-03-21T20:04:00+0200", "2013-03-21T20:04:00Zx"] {
            XCTAssertNil(parse(bad), bad)
        }
        XCTAssertNil(CBORValue.tagged(1, "2013-03-21T20:04:00Z").dateTimeValue)
    }

    func testFullDate() throws {
        let date = try XCTUnwrap(CBORFullDate(year: 1984, month: 1, day: 26))
        XCTAssertEqual(hexString(CBORValue.fullDate(date).encoded()), "d903ec6a313938342d30312d3236")
        XCTAssertEqual(try CBORValue.decode(bytes("d903ec6a313938342d30312d3236")).fullDateValue, date)
        XCTAssertNil(CBORFullDate("2023-02-29"))
        XCTAssertNotNil(CBORFullDate("2024-02-29"))
        XCTAssertNil(CBORFullDate("1984-1-26"))
        XCTAssertNil(CBORFullDate("1984-13-01"))
        XCTAssertLessThan(CBORFullDate("1984-01-26")!, CBORFullDate("1984-02-01")!)
    }

    func testEmbeddedItemsKeepTheirExactBytes() throws {
        let item: CBORValue = ["digestID": 0, "random": .bytes([9, 9]), "elementIdentifier": "family_name",
                               "elementValue": "Mustermann"]
        let wrapped = CBORValue.embedded(item)
        XCTAssertEqual(wrapped.taggedValue?.tag, 24)
        XCTAssertEqual(wrapped.embeddedBytes, item.encoded())
        XCTAssertEqual(try wrapped.embeddedValue()?.encoded(), item.encoded())
        XCTAssertNil(try CBORValue.bytes([1]).embeddedValue())
        // The inner bytes are decoded as strictly as any other input.
        XCTAssertThrowsError(try CBORValue.tagged(24, .bytes([0x00, 0x00])).embeddedValue()) {
            XCTAssertEqual($0 as? CBORDecodingError, .trailingData(offset: 1))
        }
    }

    func testFieldErrorsNameThePath() throws {
        let doc: CBORValue = [
            "issuerAuth": ["payload": ["valueDigests": [1, 2], "version": "1.0"], "alg": -7],
            "items": [.embedded(["a": 1]), .tagged(24, .bytes([0xff]))],
        ]
        let root = try CBORField(doc).map()
        let payload = try root.required("issuerAuth").map().required("payload").map()
        XCTAssertEqual(try payload.required("version").text(), "1.0")
        XCTAssertThrowsError(try payload.required("valueDigests").map()) {
            XCTAssertEqual(($0 as? CBORFieldError)?.description, "issuerAuth.payload.valueDigests: expected a map, got array")
        }
        XCTAssertThrowsError(try payload.required("docType")) {
            XCTAssertEqual(($0 as? CBORFieldError)?.description, "issuerAuth.payload.docType: missing")
        }
        XCTAssertThrowsError(try root.required("issuerAuth").map().required("alg").uint()) {
            XCTAssertEqual(($0 as? CBORFieldError)?.description, "issuerAuth.alg: expected an unsigned integer, got integer")
        }
        XCTAssertEqual(try root.required("issuerAuth").map().required("alg").int(), -7)

        let items = try root.required("items").array()
        XCTAssertEqual(try items[0].embedded().map().required("a").int(), 1)
        XCTAssertThrowsError(try items[1].embedded()) {
            XCTAssertEqual(($0 as? CBORFieldError)?.path, "items[1]")
        }
        XCTAssertThrowsError(try items[0].map().required(1)) {
            XCTAssertEqual(($0 as? CBORFieldError)?.description, "items[0]: expected a map, got tag 24")
        }
    }

    func testIntegerLabelsInPaths() throws {
        let header = try CBORField(.map([CBORMapEntry(1, -7), CBORMapEntry(33, "x")]), path: "protected").map()
        XCTAssertThrowsError(try header.required(33).bytes()) {
            XCTAssertEqual(($0 as? CBORFieldError)?.description, "protected.33: expected a byte string, got text string")
        }
        XCTAssertNil(header.optional(4))
        XCTAssertEqual(header.fields().map(\.field.path), ["protected.1", "protected.33"])
    }
}
