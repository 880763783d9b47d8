import Store
import XCTest

final class TrustMarkRepositoryTests: XCTestCase {
    private let issuer = "https://ta.example.org"
    private let type = "https://ta.example.org/marks/certified"
    private let subject = "https://rp.example.org"

    private func mark(_ id: String, subject: String? = nil, issuedAt: Int64 = 1_000,
                      expiresAt: Int64? = nil) -> TrustMarkRecord {
        TrustMarkRecord(id: id, issuer: issuer, subject: subject ?? self.subject, trustMarkType: type,
                        issuedAt: issuedAt, expiresAt: expiresAt)
    }

    func testRecordAndFind() throws {
        let marks = TrustMarkRepository(database: try Database(path: ":memory:"))
        let record = mark("a1", expiresAt: 5_000)
        try marks.record(record)
        XCTAssertEqual(try marks.find(id: "a1"), record)
        XCTAssertNil(try marks.find(id: "unknown"))
    }

    func testRecordingTheSameIdTwiceKeepsTheFirst() throws {
        let marks = TrustMarkRepository(database: try Database(path: ":memory:"))
        try marks.record(mark("a1", issuedAt: 1_000))
        try marks.record(mark("a1", issuedAt: 2_000))
        XCTAssertEqual(try marks.find(id: "a1")?.issuedAt, 1_000)
    }

    func testRevokeThenFind() throws {
        let marks = TrustMarkRepository(database: try Database(path: ":memory:"))
        try marks.record(mark("a1"))
        try marks.record(mark("a2", issuedAt: 1_500))
        try marks.record(mark("other", subject: "https://other.example.org"))

        let touched = try marks.revoke(issuer: issuer, trustMarkType: type, subject: subject,
                                       at: 2_000, reason: "audit failed")

        XCTAssertEqual(touched, 2)
        for id in ["a1", "a2"] {
            let found = try XCTUnwrap(try marks.find(id: id))
            XCTAssertEqual(found.revokedAt, 2_000)
            XCTAssertEqual(found.revocationReason, "audit failed")
        }
        XCTAssertNil(try marks.find(id: "other")?.revokedAt)
        let revocation = try XCTUnwrap(try marks.revocation(issuer: issuer, trustMarkType: type, subject: subject))
        XCTAssertEqual(revocation.revokedAt, 2_000)
        XCTAssertEqual(revocation.reason, "audit failed")
    }

    func testRevokingAgainKeepsTheFirstRevocation() throws {
        let marks = TrustMarkRepository(database: try Database(path: ":memory:"))
        try marks.record(mark("a1"))
        XCTAssertEqual(try marks.revoke(issuer: issuer, trustMarkType: type, subject: subject, at: 2_000, reason: "first"), 1)
        XCTAssertEqual(try marks.revoke(issuer: issuer, trustMarkType: type, subject: subject, at: 3_000, reason: "second"), 0)
        XCTAssertEqual(try marks.find(id: "a1")?.revocationReason, "first")
        XCTAssertEqual(try marks.revocation(issuer: issuer, trustMarkType: type, subject: subject)?.reason, "first")
    }

    func testMarksIssuedWhileRevokedAreStoredRevokedUntilUnrevoked() throws {
        let marks = TrustMarkRepository(database: try Database(path: ":memory:"))
        XCTAssertEqual(try marks.revoke(issuer: issuer, trustMarkType: type, subject: subject, at: 2_000, reason: "banned"), 0)

        try marks.record(mark("later", issuedAt: 3_000))
        let later = try XCTUnwrap(try marks.find(id: "later"))
        XCTAssertEqual(later.revokedAt, 3_000, "revoked from issuance, not before it existed")
        XCTAssertEqual(later.revocationReason, "banned")

        try marks.unrevoke(issuer: issuer, trustMarkType: type, subject: subject)
        XCTAssertNil(try marks.revocation(issuer: issuer, trustMarkType: type, subject: subject))
        try marks.record(mark("afterUnrevoke", issuedAt: 4_000))
        XCTAssertNil(try marks.find(id: "afterUnrevoke")?.revokedAt)
        XCTAssertNotNil(try marks.find(id: "later")?.revokedAt, "a JWT reported revoked stays revoked")
        try marks.unrevoke(issuer: issuer, trustMarkType: type, subject: subject) // idempotent
    }

    func testRevocationPersistsAcrossReopening() throws {
        let path = try temporaryDatabasePath()
        do {
            let database = try Database(path: path)
            let marks = TrustMarkRepository(database: database)
            try marks.record(mark("a1"))
            try marks.revoke(issuer: issuer, trustMarkType: type, subject: subject, at: 2_000, reason: "gone")
            database.close()
        }
        let marks = TrustMarkRepository(database: try Database(path: path))
        XCTAssertEqual(try marks.find(id: "a1")?.revokedAt, 2_000)
        XCTAssertEqual(try marks.revocation(issuer: issuer, trustMarkType: type, subject: subject)?.reason, "gone")
        try marks.record(mark("a2", issuedAt: 5_000))
        XCTAssertEqual(try marks.find(id: "a2")?.revocationReason, "gone")
    }

    func testRecordsAndActiveSubjects() throws {
        let marks = TrustMarkRepository(database: try Database(path: ":memory:"))
        try marks.record(mark("b2", subject: "https://b.example.org", issuedAt: 2_000))
        try marks.record(mark("b1", subject: "https://b.example.org", issuedAt: 1_000, expiresAt: 1_500))
        try marks.record(mark("a1", subject: "https://a.example.org"))
        try marks.record(mark("expired", subject: "https://expired.example.org", expiresAt: 1_200))
        try marks.record(mark("revoked", subject: "https://revoked.example.org"))
        try marks.revoke(issuer: issuer, trustMarkType: type, subject: "https://revoked.example.org", at: 1_100, reason: "x")

        XCTAssertEqual(try marks.records(issuer: issuer, trustMarkType: type, subject: "https://b.example.org").map(\.id),
                       ["b1", "b2"])
        XCTAssertEqual(try marks.activeSubjects(issuer: issuer, trustMarkType: type, now: 1_300),
                       ["https://a.example.org", "https://b.example.org"])
        XCTAssertEqual(try marks.activeSubjects(issuer: issuer, trustMarkType: "other", now: 1_300), [])
    }
}
