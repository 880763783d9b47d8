import Cryptography
import XCTest

final class ConstantTimeTests: XCTestCase {
    func testEqualBytesAndStrings() {
        XCTAssertTrue(ConstantTime.equal([1, 2, 3] as [UInt8], [1, 2, 3] as [UInt8]))
        XCTAssertFalse(ConstantTime.equal([1, 2, 3] as [UInt8], [1, 2, 4] as [UInt8]), "last byte differs")
        XCTAssertFalse(ConstantTime.equal([9, 2, 3] as [UInt8], [1, 2, 3] as [UInt8]), "first byte differs")
        XCTAssertFalse(ConstantTime.equal([1, 2] as [UInt8], [1, 2, 3] as [UInt8]), "a prefix is not equal")
        XCTAssertTrue(ConstantTime.equal([] as [UInt8], [] as [UInt8]))
        XCTAssertFalse(ConstantTime.equal([] as [UInt8], [0] as [UInt8]))
        // Slices and non-contiguous collections compare by their bytes.
        let digest = Digest.sha256(Array("token".utf8))
        XCTAssertTrue(ConstantTime.equal(digest[8...], Array(digest[8...])))
        XCTAssertTrue(ConstantTime.equal(Array("abc".utf8).reversed(), Array("cba".utf8)))
        XCTAssertTrue(ConstantTime.equal("123456", "123456"))
        XCTAssertFalse(ConstantTime.equal("123456", "123457"))
        XCTAssertFalse(ConstantTime.equal("123456", "12345"))
        XCTAssertTrue(ConstantTime.equal(String("x123456".dropFirst()), "123456"), "a string made from a substring")
    }
}
