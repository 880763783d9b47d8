import Cryptography
import Foundation
import XCTest

final class HMACTests: XCTestCase {
    /// RFC 4231 §4.2, §4.3 and §4.7 (test cases 1, 2 and 6: short key, short "Jefe" key, and a
    /// key longer than the block size, which HMAC must hash first).
    func testRFC4231Vectors() {
        XCTAssertEqual(hex(HMAC.sha256(key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8))),
                       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        XCTAssertEqual(hex(HMAC.sha256(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8))),
                       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        XCTAssertEqual(hex(HMAC.sha256(key: [UInt8](repeating: 0xaa, count: 131),
                                       data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))),
                       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    /// Empty inputs are legal for HMAC (a zero-length key is padded with zeros).
    func testEmptyKeyAndData() {
        XCTAssertEqual(hex(HMAC.sha256(key: [], data: [])),
                       "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    /// A kept key gives the one-shot MAC, call after call (its contexts restart from the
    /// key), and from several threads at once.
    func testKeptKeyMatchesOneShot() {
        for key in [[UInt8](), Array("Jefe".utf8), [UInt8](repeating: 0xaa, count: 131)] {
            let kept = HMAC.SHA256Key(key)
            for length in [0, 1, 8, 24, 64, 65, 300] {
                let data = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ key.count) }
                XCTAssertEqual(kept.mac(data), HMAC.sha256(key: key, data: data))
                XCTAssertEqual(kept.mac(data), HMAC.sha256(key: key, data: data))
            }
        }
        let kept = HMAC.SHA256Key(Array("Jefe".utf8))
        let message = Array("what do ya want for nothing?".utf8)
        XCTAssertEqual(hex(kept.mac(message)), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        let expected = HMAC.sha256(key: Array("Jefe".utf8), data: message)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<200 { XCTAssertEqual(kept.mac(message), expected) }
        }
    }

    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
