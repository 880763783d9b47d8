import JSON
import StatusList
import XCTest

final class StatusListTests: XCTestCase {
    /// Token Status List §4.1, 1-bit example: 16 statuses pack into 0xB9 0xA3, and the draft
    /// publishes `lst` = "eNrbuRgAAhcBXQ" for them.
    func testSpecOneBitExample() throws {
        var list = try StatusList(bits: 1, size: 16)
        for index in [0, 3, 4, 5, 7, 8, 9, 13, 15] { try list.setStatus(.invalid, at: index) }
        XCTAssertEqual(list.bytes, [0xB9, 0xA3])
        XCTAssertEqual(try list.encodedList(), "eNrbuRgAAhcBXQ")
        let decoded = try StatusList(bits: 1, encodedList: "eNrbuRgAAhcBXQ")
        XCTAssertEqual(decoded, list)
        XCTAssertEqual(try decoded.status(at: 0), .invalid)
        XCTAssertEqual(try decoded.status(at: 1), .valid)
    }

    /// Token Status List §4.1, 2-bit example: 12 statuses pack into 0xC9 0x44 0xF9,
    /// `lst` = "eNo76fITAAPfAgc".
    func testSpecTwoBitExample() throws {
        let statuses: [UInt8] = [1, 2, 0, 3, 0, 1, 0, 1, 1, 2, 3, 3]
        var list = try StatusList(bits: 2, size: 12)
        for (index, value) in statuses.enumerated() { try list.setStatus(StatusType(rawValue: value), at: index) }
        XCTAssertEqual(list.bytes, [0xC9, 0x44, 0xF9])
        XCTAssertEqual(try list.encodedList(), "eNo76fITAAPfAgc")
        let decoded = try StatusList(bits: 2, encodedList: "eNo76fITAAPfAgc")
        XCTAssertEqual(try (0..<12).map { try decoded.status(at: $0).rawValue }, statuses)
    }

    func testRoundTripForEveryBitSize() throws {
        for bits in [1, 2, 4, 8] {
            var generator = SystemRandomNumberGenerator()
            let size = 1000
            var list = try StatusList(bits: bits, size: size)
            XCTAssertEqual(list.count, size)
            var expected: [UInt8] = []
            for index in 0..<size {
                let value = UInt8.random(in: 0...UInt8((1 << bits) - 1), using: &generator)
                expected.append(value)
                try list.setStatus(StatusType(rawValue: value), at: index)
            }
            // Overwriting must clear the old bits, not OR into them.
            try list.setStatus(.valid, at: 7)
            expected[7] = 0
            let decoded = try StatusList(bits: bits, encodedList: list.encodedList())
            XCTAssertEqual(try (0..<size).map { try decoded.status(at: $0).rawValue }, expected, "bits \(bits)")
            let json = try list.jsonValue()
            XCTAssertEqual(json["bits"], JSONValue(bits))
        }
    }

    func testLargeListCompressesAndRoundTrips() throws {
        var list = try StatusList(bits: 1, size: 1_000_000)
        for index in stride(from: 17, to: 1_000_000, by: 9973) { try list.setStatus(.invalid, at: index) }
        let lst = try list.encodedList()
        XCTAssertLessThan(lst.count, 2_000, "a sparse list must compress well")
        let decoded = try StatusList(bits: 1, encodedList: lst)
        XCTAssertEqual(decoded, list)
        XCTAssertEqual(try decoded.status(at: 17 + 9973), .invalid)
        XCTAssertEqual(try decoded.status(at: 18), .valid)
    }

    func testBoundsAndValueChecks() throws {
        var list = try StatusList(bits: 2, size: 8)
        XCTAssertThrowsError(try list.status(at: 8)) { XCTAssertEqual($0 as? StatusListError, .indexOutOfRange(index: 8, size: 8)) }
        XCTAssertThrowsError(try list.status(at: -1))
        XCTAssertThrowsError(try list.setStatus(.invalid, at: 8))
        XCTAssertThrowsError(try list.setStatus(StatusType(rawValue: 4), at: 0)) {
            XCTAssertEqual($0 as? StatusListError, .valueTooLarge(4, bits: 2))
        }
        XCTAssertThrowsError(try StatusList(bits: 3, size: 8)) { XCTAssertEqual($0 as? StatusListError, .invalidBits(3)) }
        XCTAssertThrowsError(try StatusList(bits: 16, encodedList: "eNrbuRgAAhcBXQ"))
    }

    func testInflateStopsAtLimitAndRejectsBadStreams() throws {
        // 1 MiB of zeros compresses to about 1 KiB: a small bomb.
        let bomb = try StatusList(bits: 8, size: 1 << 20).encodedList()
        XCTAssertLessThan(bomb.count, 2_000)
        XCTAssertThrowsError(try StatusList(bits: 8, encodedList: bomb, maximumBytes: 64 * 1024)) {
            XCTAssertEqual($0 as? StatusListError, .tooLarge(limit: 64 * 1024))
        }
        XCTAssertNoThrow(try StatusList(bits: 8, encodedList: bomb, maximumBytes: 1 << 20))

        XCTAssertThrowsError(try StatusList(bits: 1, encodedList: "eNrbuRgAAhcB")) { error in
            guard case .malformedList? = error as? StatusListError else { return XCTFail("\(error)") }
        }
        // Data after the end of the zlib stream.
        XCTAssertThrowsError(try StatusList(bits: 1, encodedList: "eNrbuRgAAhcBXQAA"))
        XCTAssertThrowsError(try StatusList(bits: 1, encodedList: "not base64!"))
        XCTAssertThrowsError(try StatusList(bits: 1, encodedList: "AAAA"))
        XCTAssertThrowsError(try StatusList(bits: 1, encodedList: ""))
    }

    func testStatusTypeNames() {
        XCTAssertEqual(StatusType.valid.rawValue, 0)
        XCTAssertEqual(StatusType.invalid.rawValue, 1)
        XCTAssertEqual(StatusType.suspended.rawValue, 2)
        XCTAssertEqual(StatusType.suspended.description, "SUSPENDED")
        XCTAssertEqual(StatusType(rawValue: 3).description, "0x03")
    }
}
