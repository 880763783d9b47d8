import XCTest
@testable import Support

/// Identifiers made in creation order: a time prefix that sorts as SQLite's BINARY collation
/// compares, then the caller's random bytes.
final class OrderedIdentifierTests: XCTestCase {
    private func random(_ seed: UInt8) -> [UInt8] { (0..<16).map { UInt8(truncatingIfNeeded: Int($0) * 31) ^ seed } }

    func testIdentifiersSortByTimeAndKeepTheirRandomPart() {
        let times: [UInt64] = [0, 1, 255, 256, 1_760_000_000_000, 1_760_000_000_001, (1 << 48) - 1]
        let values = times.map { OrderedIdentifier.make(random: random(7), milliseconds: $0) }
        // Byte order, as SQLite's BINARY collation compares them.
        XCTAssertTrue(zip(values, values.dropFirst()).allSatisfy { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        XCTAssertEqual(values[4].prefix(12), "0199c82cc000")
        XCTAssertEqual(OrderedIdentifier.timePrefix(0), "000000000000")
        XCTAssertEqual(OrderedIdentifier.timePrefix((1 << 48) - 1), "ffffffffffff")
        XCTAssertTrue(values.allSatisfy { $0.utf8.count == 12 + 22 })
        XCTAssertTrue(values.allSatisfy { $0.hasSuffix(Base64URL.encode(random(7))) }, "the random part is kept as given")
        XCTAssertNotEqual(OrderedIdentifier.make(random: random(1), milliseconds: 42),
                          OrderedIdentifier.make(random: random(2), milliseconds: 42), "the random part differs within one millisecond")
    }

    func testPrefixCheck() {
        let value = OrderedIdentifier.make(random: random(3))
        XCTAssertTrue(OrderedIdentifier.hasPrefix(value, length: value.utf8.count))
        XCTAssertFalse(OrderedIdentifier.hasPrefix(value, length: value.utf8.count + 1), "wrong length")
        XCTAssertFalse(OrderedIdentifier.hasPrefix("0199C82CC000" + Base64URL.encode(random(3)), length: 34), "upper-case hex is not ours")
        XCTAssertFalse(OrderedIdentifier.hasPrefix("zz" + value.dropFirst(2), length: value.utf8.count))
        let now = OrderedIdentifier.wallClockMilliseconds()
        XCTAssertGreaterThan(now, 1_700_000_000_000)
    }
}
