import Foundation
import XCTest
@testable import Support

final class LockedTests: XCTestCase {
    func testConcurrentIncrementsAllLand() {
        let counter = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<1000 { counter.withLock { $0 += 1 } }
        }
        XCTAssertEqual(counter.current, 8000)
    }

    func testManualClockMoves() {
        let clock = ManualClock(100)
        clock.advance(5)
        XCTAssertEqual(clock.now(), 105)
        clock.set(7)
        XCTAssertEqual(clock.now(), 7)
    }
}

final class EncodingTests: XCTestCase {
    /// Against Foundation's base64 (RFC 4648 §5 alphabet, padding dropped), every length mod 3.
    func testBase64URLMatchesFoundationForEveryTailLength() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) }
            let expected = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            XCTAssertEqual(Base64URL.encode(bytes), expected)
            XCTAssertEqual(Base64URL.decode(expected), bytes)
        }
    }

    /// Long inputs go through the two-groups-at-a-time path (eight bytes read at once): every
    /// byte value at every offset of a group, and each length around the path's end.
    func testBase64URLMatchesFoundationForLongInputs() {
        let all = (0..<768).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 256) }
        for length in [6, 7, 8, 9, 12, 13, 14, 15, 16, 17, 255, 256, 257, 766, 767, 768] {
            let bytes = Array(all.prefix(length))
            let expected = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            XCTAssertEqual(Base64URL.encode(bytes), expected, "length \(length)")
            XCTAssertEqual(Base64URL.decode(expected), bytes)
        }
    }

    /// The appending form writes the same characters after what the buffer already holds, also
    /// across the chunks it encodes on the stack (768 input bytes each).
    func testBase64URLAppendingMatchesTheStringForm() {
        for length in [0, 1, 2, 3, 5, 6, 8, 9, 64, 65, 100, 767, 768, 769, 770, 1_536, 5_000] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 91 &+ 3) }
            var out = Array("head.".utf8)
            Base64URL.encode(bytes, appendingTo: &out)
            XCTAssertEqual(out, Array("head.".utf8) + Array(Base64URL.encode(bytes).utf8), "length \(length)")
        }
    }

    func testHexRoundTripAndRejects() {
        XCTAssertEqual(Hex.encode([0x00, 0xAB, 0xFF]), "00abff")
        XCTAssertEqual(Hex.decode("00ABff"), [0x00, 0xAB, 0xFF])
        XCTAssertNil(Hex.decode("abc"))
        XCTAssertNil(Hex.decode("zz"))
    }

    func testParametersRules() throws {
        let p = Parameters(encoded: "a=1&b=x+y&a=2&empty=&c=%2Fz")
        XCTAssertEqual(p.all("a"), ["1", "2"])
        XCTAssertEqual(try p.single("b"), "x y")
        XCTAssertEqual(try p.single("c"), "/z")
        XCTAssertThrowsError(try p.single("a")) { XCTAssertEqual($0 as? ParameterError, .repeated("a")) }
        XCTAssertThrowsError(try p.single("empty")) { XCTAssertEqual($0 as? ParameterError, .missing("empty")) }
        XCTAssertNil(try p.optional("empty"))
        XCTAssertThrowsError(try Parameters(encoded: "t=yes").bool("t"))
        XCTAssertEqual(try Parameters(encoded: "t=true").bool("t"), true)
    }

    /// `single` and `optional` scan for the first value and a repeat: the same answers as
    /// `all(name)` would give, wherever the repeat is.
    func testSingleAndOptionalFindRepeatsAnywhere() throws {
        let p = Parameters(encoded: "x=1&y=&a=2&y=3&z=4&x=5")
        XCTAssertThrowsError(try p.single("x")) { XCTAssertEqual($0 as? ParameterError, .repeated("x")) }
        XCTAssertThrowsError(try p.optional("x")) { XCTAssertEqual($0 as? ParameterError, .repeated("x")) }
        // An empty first value is missing for `single` even when repeated; `optional` refuses the repeat.
        XCTAssertThrowsError(try p.single("y")) { XCTAssertEqual($0 as? ParameterError, .missing("y")) }
        XCTAssertThrowsError(try p.optional("y")) { XCTAssertEqual($0 as? ParameterError, .repeated("y")) }
        XCTAssertEqual(try p.single("z"), "4")
        XCTAssertEqual(try p.optional("a"), "2")
        XCTAssertNil(try p.optional("absent"))
        XCTAssertThrowsError(try p.single("absent")) { XCTAssertEqual($0 as? ParameterError, .missing("absent")) }
    }

    /// Splitting keeps order, repeats and empty values, and skips empty pieces.
    func testPairsSplitting() {
        let pairs = URLEncoding.pairs("&a=1&&b&c=&a=2=3&")
        XCTAssertEqual(pairs.map(\.name), ["a", "b", "c", "a"])
        XCTAssertEqual(pairs.map(\.value), ["1", "", "", "2=3"])
        XCTAssertTrue(URLEncoding.pairs("").isEmpty)
        XCTAssertTrue(URLEncoding.pairs("&&").isEmpty)
    }

    func testEncodedRoundTrips() {
        let p = Parameters(pairs: [("redirect_uri", "https://w.example/cb?x=1&y=2"), ("state", "a b/ü")])
        let back = Parameters(encoded: p.encoded)
        XCTAssertEqual(back.all("redirect_uri"), ["https://w.example/cb?x=1&y=2"])
        XCTAssertEqual(back.all("state"), ["a b/ü"])
        XCTAssertFalse(p.encoded.contains(" "))
    }

    /// The exact bytes: RFC 3986 unreserved characters as they are, every other byte (UTF-8 of
    /// non-ASCII included) as an upper-case `%XX`.
    func testPercentEncodingIsExact() {
        XCTAssertEqual(URLEncoding.encode("aZ09-._~"), "aZ09-._~")
        XCTAssertEqual(URLEncoding.encode(#"{"a":"b/c"} +%ü"#), "%7B%22a%22%3A%22b%2Fc%22%7D%20%2B%25%C3%BC")
        XCTAssertEqual(URLEncoding.encode(""), "")
        XCTAssertEqual(Parameters(pairs: [("a b", "1&2"), ("c", "")]).encoded, "a%20b=1%262&c=")
        XCTAssertEqual(URLEncoding.appendingQuery([("x", "1 2")], to: "https://h/p?q=1#f"), "https://h/p?q=1&x=1%202#f")
    }
}

final class WorkPoolTests: XCTestCase {
    func testRunsJobsOffTheCallerAndBoundsTheQueue() {
        let pool = WorkPool(name: "test", threads: 2, queueLimit: 2)
        defer { pool.shutdown() }
        let gate = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        // Two blockers occupy both threads; two more fit the queue; the fifth is refused.
        XCTAssertTrue(pool.submit { gate.wait(); done.signal() })
        XCTAssertTrue(pool.submit { gate.wait(); done.signal() })
        Thread.sleep(forTimeInterval: 0.1)
        XCTAssertTrue(pool.submit { done.signal() })
        XCTAssertTrue(pool.submit { done.signal() })
        XCTAssertFalse(pool.submit { done.signal() })
        gate.signal(); gate.signal()
        for _ in 0..<4 { XCTAssertEqual(done.wait(timeout: .now() + 2), .success) }
    }

    func testShutdownRefusesNewWork() {
        let pool = WorkPool(name: "test", threads: 1, queueLimit: 4)
        pool.shutdown()
        XCTAssertFalse(pool.submit {})
    }
}
