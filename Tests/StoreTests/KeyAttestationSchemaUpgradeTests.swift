@testable import Store
import XCTest

/// Migration step 5 (IssuanceSchema.version5) adds who attested a credential's holder key:
/// records of a version 4 file read as not attested, new records keep both columns.
final class KeyAttestationSchemaUpgradeTests: XCTestCase {
    func testVersionFourRecordsSurviveAndNewOnesKeepTheAttestation() throws {
        let path = try databaseAtSchemaVersion(4, rows: [
            "INSERT INTO status_lists (id, uri, issuer, bits, size, created_at) VALUES (1, 'https://i/status/1', 'https://i', 2, 65536, 10)",
            """
            INSERT INTO issued_credentials (id, issuer, persona, configuration_id, status_uri, status_list, status_index, status,
                key_thumbprint, notification_id, issued_at, expires_at)
            VALUES ('c-1', 'https://i', 'erika', 'urn:eudi:pid:1', 'https://i/status/1', 1, 7, 0, 'jkt', 'note-1', 10, 1000)
            """,
        ])
        let database = try Database(path: path)
        XCTAssertEqual(try Migrations.userVersion(of: database), Migrations.latestVersion)
        let records = IssuedCredentialRepository(database: database)
        let old = try XCTUnwrap(records.find(id: "c-1"))
        XCTAssertNil(old.keyAttestationIssuer)
        XCTAssertNil(old.keyStorage)
        try records.insert(IssuedCredentialRecord(
            id: "c-2", issuer: "https://i", persona: "erika", configurationID: "urn:eudi:pid:1", statusURI: "https://i/status/1",
            statusIndex: 8, keyThumbprint: "jkt2", notificationID: nil, issuedAt: 20, expiresAt: 1000,
            keyAttestationIssuer: "https://wp.example", keyStorage: "[\"iso_18045_high\"]"))
        let new = try XCTUnwrap(records.find(id: "c-2"))
        XCTAssertEqual(new.keyAttestationIssuer, "https://wp.example")
        XCTAssertEqual(new.keyStorage, "[\"iso_18045_high\"]")
        XCTAssertEqual(try records.list(issuer: "https://i", persona: nil).map(\.id), ["c-1", "c-2"])
    }
}
