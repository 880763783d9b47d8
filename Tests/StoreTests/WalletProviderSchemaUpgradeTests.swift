@testable import Store
import XCTest

/// Migration steps 8 and 9 on a version 7 file: an instance registered before them keeps its
/// row, starts with no integrity assertion and an App Attest counter of 0, and the validity
/// settling of step 8's indexes works on the upgraded file.
final class WalletProviderSchemaUpgradeTests: XCTestCase {
    func testVersionSevenInstancesSurvive() throws {
        let path = try databaseAtSchemaVersion(7, rows: [
            """
            INSERT INTO wallet_provider_instances (provider, id, account, hardware_jwk, hardware_jwk_thumbprint, format,
                device_facts, state, created_at, updated_at)
            VALUES ('https://wp', 'tag', 'acc', '{}', 'hw', 'apple', '{}', 'valid', 1, 1)
            """,
            "INSERT INTO wallet_provider_accounts (provider, id, created_at) VALUES ('https://wp', 'acc', 1)",
        ])
        let database = try Database(path: path)
        XCTAssertEqual(try Migrations.userVersion(of: database), Migrations.latestVersion)
        let repository = WalletInstanceRepository(database: database)
        let instance = try XCTUnwrap(repository.find(provider: "https://wp", id: "tag"))
        XCTAssertNil(instance.integrityAssertion)
        XCTAssertEqual(try repository.assertionCounter(provider: "https://wp", id: "tag"), 0)
        try repository.recordIntegrityAssertion(provider: "https://wp", id: "tag", assertion: "token", now: 5)
        XCTAssertEqual(try repository.find(provider: "https://wp", id: "tag")?.integrityAssertion, "token")
        // It held no live PID: the first settle takes the stored `valid` back to `operational`.
        XCTAssertEqual(try WalletInstanceValidityRepository(database: database).settle(provider: nil, now: 6).map(\.state), ["operational"])
    }
}
