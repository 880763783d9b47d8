import Cryptography
import Foundation
import OAuth
import Support
import XCTest

/// `SingleUseNonces` (c_nonce-style, spent once) and `DPoPNonces` (reusable while they live).
final class StatelessNonceTests: XCTestCase {
    private let now = OAuthTestKit.start

    private func nonces(_ clock: ManualClock, store: any ReplayStore = MemoryReplayStore(), label: String = "test c_nonce v1",
                        secret: [UInt8] = OAuthTestKit.secret) -> SingleUseNonces {
        SingleUseNonces(issuer: OAuthTestKit.issuer, secret: secret, label: label, purpose: "c_nonce", lifetime: 300,
                        clock: clock, store: store)
    }

    func testSingleUseWithinLifetime() throws {
        let clock = ManualClock(now)
        let service = nonces(clock)
        let a = service.issue(), b = service.issue()
        XCTAssertNotEqual(a, b)
        XCTAssertEqual(a.utf8.count, 54)
        XCTAssertTrue(try service.consume(a))
        XCTAssertFalse(try service.consume(a), "good for one use")
        XCTAssertFalse(try service.consume("made-up"))
        // A flipped MAC byte: the constant-time comparison refuses it.
        var forged = Base64URL.decode(b)!
        forged[39] ^= 1
        XCTAssertFalse(try service.consume(Base64URL.encode(forged)))
        XCTAssertFalse(try nonces(clock, label: "another use").consume(b), "another label's key does not verify it")
        XCTAssertFalse(try nonces(clock, secret: Array("another secret".utf8)).consume(b), "another secret's neither")
        clock.advance(300)
        XCTAssertFalse(try service.consume(b), "expired after its lifetime")
    }

    func testConcurrentUsesHaveOneWinner() throws {
        let service = nonces(ManualClock(now))
        let nonce = service.issue()
        let wins = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 50) { _ in
            if (try? service.consume(nonce)) == true { wins.withLock { $0 += 1 } }
        }
        XCTAssertEqual(wins.current, 1)
    }

    func testDPoPNoncesAreStatelessAndExpire() {
        let clock = ManualClock(now)
        let nonces = DPoPNonces(issuer: OAuthTestKit.issuer, secret: OAuthTestKit.secret, lifetime: 300, clock: clock)
        let first = nonces.current()
        XCTAssertEqual(nonces.current(), first, "one nonce per second")
        XCTAssertEqual(DPoPNonces(issuer: OAuthTestKit.issuer, secret: OAuthTestKit.secret, lifetime: 300, clock: clock).current(), first,
                       "same issuer and secret: same nonce, so a restart keeps them valid")
        XCTAssertTrue(nonces.isValid(first, now: now + 299))
        XCTAssertFalse(nonces.isValid(first, now: now + 300))
        clock.advance(1)
        XCTAssertNotEqual(nonces.current(), first)
        XCTAssertTrue(nonces.isValid(first, now: clock.now()), "the previous second's, checked by its MAC")
        var forged = Base64URL.decode(first)!
        forged[23] ^= 1
        XCTAssertFalse(nonces.isValid(Base64URL.encode(forged), now: clock.now()))
        XCTAssertFalse(DPoPNonces(issuer: "https://other.example", secret: OAuthTestKit.secret, lifetime: 300, clock: clock)
            .isValid(first, now: clock.now()), "another issuer's key")
    }

    func testReplayRecordsSeparatePurposes() throws {
        let store = MemoryReplayStore()
        let dpop = ReplayRecords(issuer: OAuthTestKit.issuer, purpose: "dpop", store: store)
        let pop = ReplayRecords(issuer: OAuthTestKit.issuer, purpose: "client-attestation-pop", store: store)
        XCTAssertTrue(try dpop.firstUse("j1", expiresAt: now))
        XCTAssertFalse(try dpop.firstUse("j1", expiresAt: now))
        XCTAssertTrue(try pop.firstUse("j1", expiresAt: now))
    }

    func testIdentifiers() {
        let ordered = OAuthIdentifiers.ordered(bytes: 4)
        XCTAssertEqual(ordered.utf8.count, OAuthIdentifiers.orderedPrefixLength + 22, "never fewer than 128 random bits")
        XCTAssertTrue(OAuthIdentifiers.hasOrderedPrefix(OAuthIdentifiers.ordered(), length: OAuthIdentifiers.orderedPrefixLength + 43))
        XCTAssertEqual(Base64URL.decode(OAuthIdentifiers.random())?.count, 32)
    }
}
