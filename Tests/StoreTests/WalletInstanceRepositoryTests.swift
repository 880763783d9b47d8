import Store
import XCTest

/// The lookups `trustbed instances` uses to act on an id without being told the provider.
final class WalletInstanceRepositoryTests: XCTestCase {
    private func instance(_ provider: String, _ id: String, account: String, at time: Int64) -> WalletInstanceRecord {
        WalletInstanceRecord(provider: provider, id: id, account: account, hardwareJWK: "{}", hardwareJWKThumbprint: "t-\(id)",
                             format: "dev", deviceFacts: "{}", state: "installed", createdAt: time, updatedAt: time)
    }

    func testListAllAndProvidersOfAnInstanceOrAccount() throws {
        let repository = WalletInstanceRepository(database: try Database(path: ":memory:"))
        XCTAssertTrue(try repository.insertWithNewAccount(instance("https://b/wp", "tag-1", account: "acc-b", at: 1)))
        XCTAssertTrue(try repository.insertWithNewAccount(instance("https://a/wp", "tag-2", account: "acc-a", at: 2)))
        XCTAssertTrue(try repository.insertWithNewAccount(instance("https://a/wp", "tag-1", account: "acc-a1", at: 3)))

        XCTAssertEqual(try repository.listAll().map { "\($0.provider) \($0.id)" },
                       ["https://a/wp tag-2", "https://a/wp tag-1", "https://b/wp tag-1"])
        XCTAssertEqual(try repository.providers(instance: "tag-1"), ["https://a/wp", "https://b/wp"])
        XCTAssertEqual(try repository.providers(instance: "tag-2"), ["https://a/wp"])
        XCTAssertEqual(try repository.providers(instance: "never"), [])
        XCTAssertEqual(try repository.providers(account: "acc-b"), ["https://b/wp"])
        XCTAssertEqual(try repository.providers(account: "never"), [])

        XCTAssertEqual(try repository.purgeAccount(provider: "https://b/wp", account: "acc-b"), 2)
        XCTAssertEqual(try repository.providers(instance: "tag-1"), ["https://a/wp"])
        XCTAssertEqual(try repository.providers(account: "acc-b"), [])
    }
}
