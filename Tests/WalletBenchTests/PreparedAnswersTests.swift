@testable import WalletBench
import Foundation
import Support
import XCTest

final class PreparedAnswersTests: XCTestCase {
    /// A thread whose own answers are used up keeps posting the others' (the --prepare runs'
    /// balance: docs/performance.md, Issue 22), and each answer is taken exactly once.
    func testEveryThreadTakesFromOnePoolEachAnswerOnce() {
        let pool = PreparedAnswers<Int>()
        pool.add(Array(0..<3))      // thread A's answers
        pool.add(Array(100..<110))  // thread B's
        var takenByA: [Int] = []
        while let next = pool.take() { takenByA.append(next) }
        XCTAssertEqual(takenByA.count, 13)
        XCTAssertEqual(Set(takenByA), Set(Array(0..<3) + Array(100..<110)))
        XCTAssertNil(pool.take())
    }

    func testConcurrentTakersShareTheAnswersWithoutLossOrRepeat() {
        let pool = PreparedAnswers<Int>()
        for thread in 0..<8 { pool.add(Array(thread * 500..<(thread + 1) * 500)) }
        let taken = Locked<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            var mine: [Int] = []
            while let next = pool.take() { mine.append(next) }
            taken.withLock { $0 += mine }
        }
        XCTAssertEqual(taken.current.sorted(), Array(0..<4_000))
    }
}
