@testable import Store
import XCTest

/// Migration step 4 (IssuanceSchema.version4) keys status list entries by a small list id
/// instead of the list's URL: a file made by steps 1-3 keeps every record, its list, its
/// order and its status, and the entries stay unique.
final class StatusEntrySchemaUpgradeTests: XCTestCase {
    private let first = "https://i/status/1", second = "https://i/status/2"

    /// A file at user_version 3 with two lists (the second the newest), three records (one
    /// revoked) and one record whose list was never recorded (a file edited by hand).
    private func versionThreeDatabase() throws -> String {
        try databaseAtSchemaVersion(3, rows: [
            """
            INSERT INTO status_lists (uri, issuer, bits, size, created_at)
            VALUES ('\(first)', 'https://i', 2, 65536, 10), ('\(second)', 'https://i', 2, 65536, 20)
            """,
            """
            INSERT INTO issued_credentials (id, issuer, persona, configuration_id, status_uri, status_index, status,
                key_thumbprint, notification_id, issued_at, expires_at)
            VALUES ('c-1', 'https://i', 'erika', 'urn:eudi:pid:1', '\(first)', 7, 0, 'jkt', 'note-1', 10, 1000),
                   ('c-2', 'https://i', 'erika', 'urn:eudi:pid:1', '\(first)', 9, 1, 'jkt', 'note-1', 10, 1000),
                   ('c-3', 'https://i', 'erika', 'urn:eudi:pid:1', '\(second)', 7, 2, 'jkt', 'note-2', 20, 1000),
                   ('c-4', 'https://j', 'zoe', 'urn:eudi:pid:1', 'https://j/status/1', 3, 0, 'jkt', NULL, 30, 1000)
            """,
        ])
    }

    func testVersionThreeDatabaseKeepsEveryRecordAndList() throws {
        let database = try Database(path: try versionThreeDatabase())
        XCTAssertEqual(try Migrations.userVersion(of: database), Migrations.latestVersion)
        let records = IssuedCredentialRepository(database: database)
        XCTAssertEqual(try records.list(issuer: nil, persona: nil).map(\.id), ["c-1", "c-2", "c-3", "c-4"])
        XCTAssertEqual(try records.find(id: "c-3")?.statusURI, second)
        XCTAssertEqual(try records.find(id: "c-4")?.statusURI, "https://j/status/1")
        XCTAssertTrue(try records.isTaken(statusURI: first, index: 9))
        XCTAssertFalse(try records.isTaken(statusURI: second, index: 9))
        XCTAssertTrue(try records.isTaken(statusURI: "https://j/status/1", index: 3))
        XCTAssertEqual(try records.count(statusURI: first), 2)
        XCTAssertEqual(try records.nonValidStatuses(statusURI: first).map(\.index), [9])
        XCTAssertEqual(try records.nonValidStatuses(statusURI: second).map(\.status), [2])

        let lists = StatusListRepository(database: database)
        XCTAssertEqual(try lists.newest(issuer: "https://i")?.uri, second, "lists keep their order")
        XCTAssertEqual(try lists.count(issuer: "https://i"), 2)
        XCTAssertEqual(try lists.find(uri: "https://j/status/1", issuer: "https://j")?.size, 65536,
                       "the unrecorded list of a record is recorded")
    }

    func testEntriesStayUniqueAndNeedAnOpenedList() throws {
        let database = try Database(path: try versionThreeDatabase())
        let records = IssuedCredentialRepository(database: database)
        func record(_ id: String, _ uri: String, _ index: Int) -> IssuedCredentialRecord {
            IssuedCredentialRecord(id: id, issuer: "https://i", persona: "erika", configurationID: "urn:eudi:pid:1",
                                   statusURI: uri, statusIndex: index, keyThumbprint: "jkt", notificationID: nil,
                                   issuedAt: 40, expiresAt: 1000)
        }
        try records.insert(record("c-5", second, 9))
        XCTAssertTrue(try records.isTaken(statusURI: second, index: 9))
        for (id, uri, index) in [("c-6", first, 7), ("c-7", "https://i/status/3", 1)] {
            XCTAssertThrowsError(try records.insert(record(id, uri, index)), id) { error in
                guard case StoreError.constraint = error else { return XCTFail("unexpected \(error)") }
            }
        }
    }

    func testStatusEntriesAreKeyedByTheListID() throws {
        for database in [try Database(path: try versionThreeDatabase()), try Database(path: ":memory:")] {
            let unique = try database.query("SELECT name FROM pragma_index_list('issued_credentials') WHERE \"unique\" = 1")
                .compactMap { $0.text("name") }
            let keyed = try unique.map { name in
                try database.query("SELECT name FROM pragma_index_info(?) ORDER BY seqno", [.text(name)]).compactMap { $0.text("name") }
            }
            XCTAssertTrue(keyed.contains(["status_list", "status_index"]), "\(keyed)")
            XCTAssertFalse(keyed.contains { $0.contains("status_uri") }, "\(keyed)")
        }
    }
}
