@testable import Store
import XCTest

/// Migration step 3 (IssuanceSchema.version3) upgrades a database made by steps 1-2 in place:
/// rows stay, single-use and uniqueness rules still hold, and fewer b-trees remain to write.
final class IssuanceSchemaUpgradeTests: XCTestCase {
    /// A file at user_version 2 holding an offer of each grant, a seen `jti` and a record.
    private func versionTwoDatabase() throws -> String {
        try databaseAtSchemaVersion(2, rows: [
            """
            INSERT INTO issuance_offers (id, issuer, persona, configuration_ids, grant_type, pre_authorized_code, tx_code,
                tx_code_failures, issuer_state, created_at, expires_at, redeemed_at)
            VALUES ('pre', 'https://i', 'erika', 'urn:eudi:pid:1', 'pre', 'code-1', '1234', 1, NULL, 10, 1000, NULL),
                   ('auth', 'https://i', 'erika', 'urn:eudi:pid:1', 'auth', NULL, NULL, 0, 'state-1', 10, 1000, NULL)
            """,
            "INSERT INTO issuance_jtis (issuer, purpose, jti, expires_at) VALUES ('https://i', 'c_nonce', 'n-1', 500)",
            """
            INSERT INTO issued_credentials (id, issuer, persona, configuration_id, status_uri, status_index, key_thumbprint,
                notification_id, issued_at, expires_at)
            VALUES ('c-1', 'https://i', 'erika', 'urn:eudi:pid:1', 'https://i/status/1', 7, 'jkt', 'note-1', 10, 1000)
            """,
        ])
    }

    func testVersionTwoDatabaseUpgradesAndKeepsItsRows() throws {
        let database = try Database(path: try versionTwoDatabase())
        XCTAssertEqual(try Migrations.userVersion(of: database), Migrations.latestVersion)

        let offers = OfferRepository(database: database)
        XCTAssertEqual(try offers.find(issuer: "https://i", id: "pre", now: 20)?.txCodeFailures, 1)
        XCTAssertEqual(try offers.find(issuer: "https://i", issuerState: "state-1", now: 20)?.id, "auth")
        guard case .redeemed(let offer) = try offers.redeem(issuer: "https://i", preAuthorizedCode: "code-1", txCode: "1234",
                                                             now: 20, maxFailures: 5)
        else { return XCTFail("the upgraded offer was not redeemed") }
        XCTAssertEqual(offer.id, "pre")

        let nonces = NonceRepository(database: database)
        XCTAssertFalse(try nonces.recordJTI(issuer: "https://i", purpose: "c_nonce", jti: "n-1", expiresAt: 500))
        XCTAssertTrue(try nonces.recordJTI(issuer: "https://i", purpose: "c_nonce", jti: "n-2", expiresAt: 500))

        let records = IssuedCredentialRepository(database: database)
        XCTAssertEqual(try records.find(id: "c-1")?.statusIndex, 7)
        XCTAssertEqual(try records.list(issuer: "https://i", persona: "erika").map(\.id), ["c-1"])
        XCTAssertTrue(try records.isTaken(statusURI: "https://i/status/1", index: 7))
    }

    func testUpgradedOffersStayUniqueWhereAValueIsSet() throws {
        let database = try Database(path: try versionTwoDatabase())
        let offers = OfferRepository(database: database)
        func offer(_ id: String, code: String?, state: String?) -> OfferRecord {
            OfferRecord(id: id, issuer: "https://i", persona: "erika", configurationIDs: ["urn:eudi:pid:1"], grantType: "g",
                        preAuthorizedCode: code, txCode: nil, issuerState: state, createdAt: 10, expiresAt: 1000)
        }
        // Many offers without an issuer_state (or without a code) coexist, as before.
        try offers.insert(offer("pre-2", code: "code-2", state: nil))
        try offers.insert(offer("auth-2", code: nil, state: "state-2"))
        XCTAssertThrowsError(try offers.insert(offer("pre-3", code: "code-1", state: nil))) { error in
            guard case StoreError.constraint = error else { return XCTFail("unexpected \(error)") }
        }
        XCTAssertThrowsError(try offers.insert(offer("auth-3", code: nil, state: "state-1"))) { error in
            guard case StoreError.constraint = error else { return XCTFail("unexpected \(error)") }
        }
        XCTAssertThrowsError(try offers.insert(offer("pre", code: "code-9", state: nil))) { error in
            guard case StoreError.constraint = error else { return XCTFail("unexpected \(error)") }
        }
    }

    func testIssuanceTablesWriteFewerBTrees() throws {
        let database = try Database(path: try versionTwoDatabase())
        func indexes(_ table: String) throws -> [String] {
            try database.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? ORDER BY name", [.text(table)])
                .compactMap { $0.text("name") }
        }
        // The jti table is its own primary key index: no second b-tree (the one of a rowid
        // table's key was sqlite_autoindex_issuance_jtis_1).
        XCTAssertEqual(try indexes("issuance_jtis"), [])
        XCTAssertEqual(try database.query("SELECT sql FROM sqlite_master WHERE name = 'issuance_jtis'").first?.text("sql")?
            .contains("WITHOUT ROWID"), true)
        XCTAssertEqual(try indexes("issuance_offers"), ["issuance_offers_by_issuer_state", "issuance_offers_by_pre_authorized_code",
                                                        "sqlite_autoindex_issuance_offers_1"])
        // The partial index of step 8 (Wallet Provider validity) covers only records of attested
        // keys, so plain issuance still writes the four b-trees below.
        XCTAssertEqual(try indexes("issued_credentials"), ["issued_credentials_attested_by_key",
                                                           "issued_credentials_by_notification", "issued_credentials_by_status",
                                                           "sqlite_autoindex_issued_credentials_1",
                                                           "sqlite_autoindex_issued_credentials_2"])
        // A fresh database gets the same schema.
        let fresh = try Database(path: ":memory:")
        XCTAssertEqual(try fresh.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'issued_credentials'")
            .count, 5)
    }
}
