import Store
import WalletProvider
import XCTest

/// Item 8's `valid` state on the database: a PID to an attested key moves its instance
/// `operational` → `valid`, a withdrawn one back; other states and unknown keys stay put.
final class WalletInstanceValidityTests: XCTestCase {
    private let provider = "https://wp.example/wallet-provider"

    private func setUp(state: String) throws -> (WalletInstanceRepository, WalletInstanceValidity) {
        let database = try Database(path: ":memory:")
        let repository = WalletInstanceRepository(database: database)
        XCTAssertTrue(try repository.insertWithNewAccount(WalletInstanceRecord(
            provider: provider, id: "tag", account: "acc", hardwareJWK: "{}", hardwareJWKThumbprint: "hw", format: "dev",
            deviceFacts: "{}", state: state, createdAt: 1, updatedAt: 1)))
        try repository.recordAttestedKeys(provider: provider, instance: "tag", thumbprints: ["k1", "k2"], now: 2)
        return (repository, WalletInstanceValidity(database: database))
    }

    func testOperationalToValidAndBack() throws {
        let (repository, validity) = try setUp(state: "operational")
        XCTAssertEqual(try validity.pidIssued(provider: provider, keyThumbprint: "k2", now: 5), "tag")
        XCTAssertEqual(try repository.find(provider: provider, id: "tag")?.state, "valid")
        XCTAssertNil(try validity.pidIssued(provider: provider, keyThumbprint: "k1", now: 6), "already valid")
        XCTAssertEqual(try validity.pidWithdrawn(provider: provider, keyThumbprint: "k1", now: 7), "tag")
        XCTAssertEqual(try repository.find(provider: provider, id: "tag")?.state, "operational")
        XCTAssertEqual(try repository.find(provider: provider, id: "tag")?.updatedAt, 7)
    }

    func testOtherStatesProvidersAndKeysAreLeftAlone() throws {
        let (repository, validity) = try setUp(state: "installed")
        XCTAssertNil(try validity.pidIssued(provider: provider, keyThumbprint: "k1", now: 5))
        XCTAssertEqual(try repository.find(provider: provider, id: "tag")?.state, "installed")
        XCTAssertNil(try validity.pidIssued(provider: "https://other.example/wp", keyThumbprint: "k1", now: 5))
        XCTAssertNil(try validity.pidIssued(provider: provider, keyThumbprint: "never-attested", now: 5))
        XCTAssertNil(try validity.pidWithdrawn(provider: provider, keyThumbprint: "k1", now: 5))
    }

    func testAKeyAttestedAgainKeepsItsFirstInstanceAndPurgeForgetsIt() throws {
        let (repository, _) = try setUp(state: "operational")
        try repository.recordAttestedKeys(provider: provider, instance: "other", thumbprints: ["k1"], now: 3)
        XCTAssertEqual(try repository.instance(provider: provider, attestedKey: "k1"), "tag")
        XCTAssertEqual(try repository.purgeAccount(provider: provider, account: "acc"), 2)
        XCTAssertNil(try repository.instance(provider: provider, attestedKey: "k1"))
    }
}
