import Cryptography
import XCTest

final class DigestTests: XCTestCase {
    /// FIPS 180-2 "abc" vectors.
    func testSHA2KnownAnswers() {
        let abc = Array("abc".utf8)
        XCTAssertEqual(hex(Digest.sha256(abc)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(hex(Digest.sha384(abc)),
                       "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7")
        XCTAssertEqual(hex(Digest.sha512(abc)),
                       "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
        XCTAssertEqual(hex(Digest.sha256([])), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    func testSecureRandom() {
        XCTAssertEqual(SecureRandom.bytes(0), [])
        let a = SecureRandom.bytes(32)
        let b = SecureRandom.bytes(32)
        XCTAssertEqual(a.count, 32)
        XCTAssertNotEqual(a, b)
    }

    /// Every value handed out is fresh: no byte is given twice, across refills and for requests
    /// larger than a chunk.
    func testSecureRandomBufferHandsOutEachByteOnce() {
        var buffer = SecureRandom.Buffer(chunk: 48)
        var seen = Set<[UInt8]>()
        for _ in 0..<100 { XCTAssertTrue(seen.insert(buffer.next(16)).inserted) }
        XCTAssertEqual(buffer.next(100).count, 100)
        XCTAssertNotEqual(buffer.next(16), buffer.next(16))
    }

    func testSHA384AndSHA512() {
        XCTAssertEqual(hex(Digest.sha384(Array("abc".utf8))).prefix(16), "cb00753f45a35e8b")
        XCTAssertEqual(hex(Digest.sha512(Array("abc".utf8))).prefix(16), "ddaf35a193617aba")
    }

    /// A reused context gives each input's own digest: nothing of the previous input remains.
    func testReusedSHA256ContextMatchesTheOneShot() {
        let context = Digest.SHA256Context()
        let inputs: [[UInt8]] = [Array("abc".utf8), [], Array(repeating: 0x61, count: 1_000), Array("abc".utf8), Array(0...255)]
        for input in inputs { XCTAssertEqual(context.hash(input), Digest.sha256(input), "\(input.count) bytes") }
        XCTAssertEqual(hex(context.hash(Array("abc".utf8))), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    /// The lent form gives the same digest as the one returned in an array.
    func testLentSHA256IsTheDigest() {
        let context = Digest.SHA256Context()
        let inputs: [[UInt8]] = [[], Array("abc".utf8), Array(repeating: 0x61, count: 1_000), Array(0...255)]
        for input in inputs {
            XCTAssertEqual(input.withUnsafeBufferPointer { context.withHash($0) { Array($0) } }, Digest.sha256(input))
        }
    }

    /// The two-part form hashes the concatenation.
    func testTwoPartSHA256IsTheDigestOfTheConcatenation() {
        let context = Digest.SHA256Context()
        let parts: [([UInt8], [UInt8])] = [([], []), ([0xd8, 0x18], Array(0...255)), (Array("ab".utf8), Array("c".utf8)),
                                          (Array(repeating: 1, count: 100), [])]
        for (head, data) in parts { XCTAssertEqual(context.hash(head, data), Digest.sha256(head + data)) }
        XCTAssertEqual(hex(context.hash(Array("a".utf8), Array("bc".utf8))),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
