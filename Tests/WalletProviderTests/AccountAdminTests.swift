import Cryptography
import Foundation
import JOSE
import JSON
import Store
@testable import WalletProvider
import XCTest

/// Issue 21, item 8 (the account part): the admin view of an account and the account states on
/// the instances page; never keys or codes.
final class AccountAdminTests: XCTestCase {
    func testAccountSummaryAndInstancesPage() throws {
        let f = try WalletProviderFixture.make(configuration: remoteKeysConfiguration())
        let nl = try NLDevice.register(f.provider)
        _ = try nl.run(f.provider, "generate_keys", ["count": 2])
        let instance = try XCTUnwrap(WalletInstanceRepository(database: f.provider.database).find(provider: f.provider.entityID, id: nl.tag))
        let wrong = try PrivateKey(generatingFor: .ES256)
        for _ in 0 ..< 4 { _ = refusal { _ = try nl.run(f.provider, "generate_keys", signer: wrong) } }

        let summary = try f.provider.accountSummary(instance.account)
        XCTAssertEqual(summary["state"], "blocked")
        XCTAssertEqual(summary["nl_account"], true)
        XCTAssertEqual(summary["pin_failures"], 4)
        XCTAssertEqual(summary["held_keys"], 2)
        XCTAssertEqual(summary["recovery_code_stored"], false)
        XCTAssertEqual(summary["instances"]?.arrayValue?.first?["id"]?.stringValue, nl.tag)
        XCTAssertEqual(summary["transfer_sessions"], .array([]))
        let text = summary.serialized()
        XCTAssertFalse(text.contains("\"x\""), "no key material: \(text)")
        XCTAssertFalse(text.contains("pin_public_key"))
        XCTAssertEqual(refusal { _ = try f.provider.accountSummary("nobody") }?.codeValue, .notFound)

        let page = try f.provider.instancesPage()
        XCTAssertTrue(page.contains("<dd class=\"account-state\">blocked</dd>"), page)
    }
}
