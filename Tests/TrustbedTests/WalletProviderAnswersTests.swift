import JSON
import XCTest
@testable import Trustbed

/// What `FederationWalletProviderTrust` remembers of the federation's answers: a hit until the
/// answer's `exp`, nothing from another federation host (a reload), and a bound on its size.
final class WalletProviderAnswersTests: XCTestCase {
    private final class Host {}
    private let metadata: [String: JSONValue] = ["wallet_provider": ["jwks": ["keys": []]]]

    func testHitUntilTheAnswerExpires() {
        let answers = WalletProviderAnswers()
        let host = Host()
        XCTAssertNil(answers.lookup("wp\nta", owner: host, now: 100))
        answers.store("wp\nta", metadata, until: 200, owner: host)
        XCTAssertEqual(answers.lookup("wp\nta", owner: host, now: 100), metadata)
        XCTAssertEqual(answers.lookup("wp\nta", owner: host, now: 199), metadata)
        XCTAssertNil(answers.lookup("wp\nta", owner: host, now: 200), "an answer is not used at or after its exp")
        XCTAssertNil(answers.lookup("wp\nother-ta", owner: host, now: 100), "other Trust Anchors are another question")
    }

    func testAnotherHostMissesAndReplacesTheAnswers() {
        let answers = WalletProviderAnswers()
        let old = Host()
        let reloaded = Host()
        answers.store("wp\nta", metadata, until: 200, owner: old)
        XCTAssertNil(answers.lookup("wp\nta", owner: reloaded, now: 100))
        answers.store("other\nta", metadata, until: 200, owner: reloaded)
        XCTAssertEqual(answers.count, 1, "the old host's answers are dropped")
        XCTAssertNil(answers.lookup("wp\nta", owner: old, now: 100))
    }

    func testBounded() {
        let answers = WalletProviderAnswers(limit: 3)
        let host = Host()
        for index in 0..<10 { answers.store("wp\(index)\nta", metadata, until: 200, owner: host) }
        XCTAssertEqual(answers.count, 3)
        XCTAssertEqual(answers.lookup("wp9\nta", owner: host, now: 100), metadata, "the newest answer is kept")
    }
}
