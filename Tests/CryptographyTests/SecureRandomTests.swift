import Cryptography
import Foundation
import XCTest

/// `SecureRandom.bytes` serves small draws from a shared, locked pool: every byte must still
/// be handed out once, whichever thread asks.
final class SecureRandomTests: XCTestCase {
    func testSizesAroundThePoolLimit() {
        XCTAssertEqual(SecureRandom.bytes(0), [])
        for count in [1, 16, 32, 63, 64, 65, 4_096, 10_000] {
            XCTAssertEqual(SecureRandom.bytes(count).count, count)
        }
    }

    /// 16-byte draws from many threads, enough to refill the pool many times: no two alike
    /// (a draw handed out twice, or a pool reused without a refill, would repeat one).
    func testConcurrentDrawsAreAllDistinct() {
        let threads = 8, draws = 2_000
        let results = UnsafeMutableBufferPointer<[UInt8]>.allocate(capacity: threads * draws)
        results.initialize(repeating: [])
        defer { results.deallocate() }
        nonisolated(unsafe) let base = results.baseAddress!
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<draws { (base + t * draws + i).pointee = SecureRandom.bytes(16) }
        }
        let distinct = Set(results)
        XCTAssertEqual(distinct.count, threads * draws)
        XCTAssertTrue(results.allSatisfy { $0.count == 16 })
    }

    /// A buffer hands out consecutive, non-overlapping bytes and refills when short.
    func testBufferNeverRepeats() {
        var buffer = SecureRandom.Buffer(chunk: 40)
        var seen = Set<[UInt8]>()
        for _ in 0..<100 { XCTAssertTrue(seen.insert(buffer.next(16)).inserted) }
        XCTAssertEqual(buffer.next(100).count, 100)  // larger than the chunk
    }
}
