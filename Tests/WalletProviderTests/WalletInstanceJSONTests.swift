import JSON
import Store
import WalletProvider
import XCTest

/// The admin API's instance JSON, which `trustbed instances` prints too.
final class WalletInstanceJSONTests: XCTestCase {
    func testMembersAndNullReason() throws {
        let record = WalletInstanceRecord(provider: "https://x/wp", id: "tag", account: "acc", hardwareJWK: "{}",
                                          hardwareJWKThumbprint: "t", format: "dev", deviceFacts: "{}", state: "installed",
                                          createdAt: 10, updatedAt: 11)
        let one = try JSONValue.parse(WalletInstanceJSON.one(record))
        XCTAssertEqual(one, .object(["id": .string("tag"), "account": .string("acc"), "state": .string("installed"),
                                     "reason": .null, "format": .string("dev"), "created_at": .int(10), "updated_at": .int(11)]))
        var revoked = record
        revoked.reason = "lost"
        let list = try JSONValue.parse(WalletInstanceJSON.list([record, revoked]))
        XCTAssertEqual(list.objectValue?["instances"]?.arrayValue?.count, 2)
        XCTAssertEqual(list.objectValue?["instances"]?.arrayValue?[1].objectValue?["reason"], .string("lost"))
        XCTAssertEqual(try JSONValue.parse(WalletInstanceJSON.list([])), .object(["instances": .array([])]))
    }
}
