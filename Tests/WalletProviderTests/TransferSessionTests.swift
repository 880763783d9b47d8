import Cryptography
import JOSE
import Store
import Support
import XCTest
@testable import WalletProvider

/// The device transfer state machine (issue 21, item 5) over a real store, with accounts faked.
final class TransferSessionTests: XCTestCase {
    /// Accounts in memory: states and recovery codes, and where keys went.
    final class FakeAccounts: TransferAccounts, @unchecked Sendable {
        var states: [String: String] = [:]
        var codes: [String: String] = [:]
        var keysMoved: [(String, String)] = []

        func state(of account: String) throws(StoreError) -> String? { states[account] }
        func moveState(of account: String, from: String, to: String, now: Int64) throws(StoreError) -> Bool {
            guard states[account] == from else { return false }
            states[account] = to
            return true
        }
        func sameRecoveryCode(_ first: String, _ second: String) throws(StoreError) -> Bool {
            codes[first] != nil && codes[first] == codes[second]
        }
        func moveKeys(from source: String, to destination: String, now: Int64) throws(StoreError) { keysMoved.append((source, destination)) }
    }

    var accounts = FakeAccounts()
    var sessions: TransferSessions!
    let now: Int64 = 1_800_000_000

    override func setUpWithError() throws {
        accounts = FakeAccounts()
        accounts.states = ["old": "active", "new": "active", "stranger": "active"]
        accounts.codes = ["old": "code-A", "new": "code-A", "stranger": "code-B"]
        sessions = TransferSessions(provider: "https://wp.example.org", database: try Database(path: ":memory:"), accounts: accounts, lifetime: 3_600)
    }

    private func v(_ text: String) -> AppVersion { AppVersion(text)! }

    /// A compact JWE as the source makes it: ECDH-ES + A256GCM to the destination's key.
    private func payload(_ text: String = "{\"credentials\":[]}") throws -> String {
        let key = try PrivateKey(generatingFor: .ES256)
        return try JWE.encrypt(Array(text.utf8), to: JWK(publicKey: key.publicKey, use: "enc"), encryption: .A256GCM)
    }

    private func assertError(_ code: WalletProviderError.Code, status: Int, _ body: () throws -> Void, line: UInt = #line) {
        XCTAssertThrowsError(try body(), line: line) { error in
            guard let error = error as? WalletProviderError else { return XCTFail("\(error)", line: line) }
            XCTAssertEqual(error.codeValue, code, error.description, line: line)
            XCTAssertEqual(error.statusCode, status, line: line)
        }
    }

    func testFullTransferMovesKeysAndEndsTheSource() throws {
        let created = try sessions.create(destination: "new", appVersion: v("1.2.0"), now: now)
        XCTAssertEqual(created.sessionState, .created)
        XCTAssertEqual(created.expiresAt, now + 3_600)
        XCTAssertEqual(created.id.count, 36)
        XCTAssertEqual(try sessions.receive(id: created.id, destination: "new", now: now), .pending)

        let confirmed = try sessions.confirm(id: created.id, source: "old", appVersion: v("1.1.9"), now: now + 1)
        XCTAssertEqual(confirmed.sessionState, .readyForTransfer)
        XCTAssertEqual(accounts.states["old"], "transferring")
        XCTAssertEqual(try sessions.status(id: created.id, account: "old", now: now + 1).sessionState.sourceStatus, "pending")
        XCTAssertEqual(try sessions.receive(id: created.id, destination: "new", now: now + 1), .pending)

        let jwe = try payload()
        XCTAssertEqual(try sessions.send(id: created.id, source: "old", payload: jwe, now: now + 2).sessionState, .readyForDownload)
        XCTAssertEqual(try sessions.receive(id: created.id, destination: "new", now: now + 3), .payload(jwe))
        XCTAssertEqual(try sessions.receive(id: created.id, destination: "new", now: now + 3), .payload(jwe), "a retried receive gets it again")

        let completed = try sessions.complete(id: created.id, destination: "new", now: now + 4)
        XCTAssertEqual(completed.sessionState, .completed)
        XCTAssertNil(completed.payload, "the payload is forgotten once the transfer ends")
        XCTAssertEqual(completed.endedBy, "destination")
        XCTAssertEqual(accounts.states["old"], "transferred")
        XCTAssertEqual(accounts.keysMoved.map { "\($0.0)>\($0.1)" }, ["old>new"])
        XCTAssertEqual(try sessions.status(id: created.id, account: "old", now: now + 5).sessionState.sourceStatus, "completed")
        XCTAssertNil(try TransferSessionRepository(database: sessions.database).find(provider: sessions.provider, id: created.id)?.payload)
    }

    func testRetriedStepsAnswerTheSameAndChangeNothing() throws {
        let first = try sessions.create(destination: "new", appVersion: v("1.0.0"), now: now)
        XCTAssertEqual(try sessions.create(destination: "new", appVersion: v("1.0.0"), now: now + 1).id, first.id,
                       "a retried first disclosure gets the open session back")
        let confirmed = try sessions.confirm(id: first.id, source: "old", appVersion: v("1.0.0"), now: now + 1)
        XCTAssertEqual(try sessions.confirm(id: first.id, source: "old", appVersion: v("1.0.0"), now: now + 2), confirmed)
        let jwe = try payload()
        let sent = try sessions.send(id: first.id, source: "old", payload: jwe, now: now + 3)
        XCTAssertEqual(try sessions.send(id: first.id, source: "old", payload: jwe, now: now + 4), sent)
        assertError(.invalidTransferState, status: 409) { _ = try self.sessions.send(id: first.id, source: "old", payload: try self.payload("other"), now: now + 4) }
        assertError(.invalidTransferState, status: 409) { _ = try self.sessions.confirm(id: first.id, source: "old", appVersion: self.v("1.0.0"), now: now + 4) }
        let completed = try sessions.complete(id: first.id, destination: "new", now: now + 5)
        XCTAssertEqual(try sessions.complete(id: first.id, destination: "new", now: now + 6), completed)
        XCTAssertEqual(accounts.keysMoved.count, 1, "a retried completion moves nothing twice")
        XCTAssertEqual(accounts.states["old"], "transferred")
    }

    func testOutOfOrderStepsAre409() throws {
        let session = try sessions.create(destination: "new", appVersion: v("1.0.0"), now: now)
        assertError(.invalidTransferState, status: 409) { _ = try self.sessions.complete(id: session.id, destination: "new", now: now) }
        assertError(.invalidTransferState, status: 409) { _ = try self.sessions.cancel(id: session.id, account: "new", now: now) }
        _ = try sessions.confirm(id: session.id, source: "old", appVersion: v("1.0.0"), now: now)
        assertError(.invalidTransferState, status: 409) { _ = try self.sessions.complete(id: session.id, destination: "new", now: now) }
        XCTAssertEqual(try sessions.status(id: session.id, account: "new", now: now).sessionState, .readyForTransfer, "nothing changed")
        XCTAssertEqual(accounts.states["old"], "transferring")
    }

    func testWrongSideAndForeignSessions() throws {
        let session = try sessions.create(destination: "new", appVersion: v("1.0.0"), now: now)
        assertError(.invalidRequest, status: 403) { _ = try self.sessions.confirm(id: session.id, source: "new", appVersion: self.v("1.0.0"), now: now) }
        // Another person's account cannot join (different recovery code) nor see the session.
        assertError(.notFound, status: 404) { _ = try self.sessions.confirm(id: session.id, source: "stranger", appVersion: self.v("1.0.0"), now: now) }
        assertError(.notFound, status: 404) { _ = try self.sessions.status(id: session.id, account: "stranger", now: now) }
        assertError(.notFound, status: 404) { _ = try self.sessions.receive(id: "00000000-0000-4000-8000-000000000000", destination: "new", now: now) }
        _ = try sessions.confirm(id: session.id, source: "old", appVersion: v("1.0.0"), now: now)
        assertError(.invalidRequest, status: 403) { _ = try self.sessions.send(id: session.id, source: "new", payload: try self.payload(), now: now) }
        assertError(.notFound, status: 404) { _ = try self.sessions.send(id: session.id, source: "stranger", payload: try self.payload(), now: now) }
        assertError(.invalidRequest, status: 403) { _ = try self.sessions.receive(id: session.id, destination: "old", now: now) }
        assertError(.invalidRequest, status: 403) { _ = try self.sessions.complete(id: session.id, destination: "old", now: now) }
        assertError(.notFound, status: 404) { _ = try self.sessions.cancel(id: session.id, account: "stranger", now: now) }
        XCTAssertEqual(try sessions.status(id: session.id, account: "old", now: now).sessionState, .readyForTransfer)
        XCTAssertEqual(accounts.states["stranger"], "active")
    }

    func testConfirmNeedsAnActiveSourceAndANewEnoughDestination() throws {
        let session = try sessions.create(destination: "new", appVersion: v("1.2.0"), now: now)
        assertError(.appVersionMismatch, status: 403) { _ = try self.sessions.confirm(id: session.id, source: "old", appVersion: self.v("1.10.0"), now: now) }
        accounts.states["old"] = "blocked"
        assertError(.invalidTransferState, status: 409) { _ = try self.sessions.confirm(id: session.id, source: "old", appVersion: self.v("1.2.0"), now: now) }
        XCTAssertEqual(try sessions.status(id: session.id, account: "new", now: now).sessionState, .created)
        XCTAssertEqual(accounts.states["old"], "blocked")
    }

    func testCancelFromEitherSideRestoresTheSource() throws {
        for side in ["old", "new"] {
            accounts.states["old"] = "active"
            let session = try sessions.create(destination: "new", appVersion: v("1.0.0"), now: now)
            _ = try sessions.confirm(id: session.id, source: "old", appVersion: v("1.0.0"), now: now)
            if side == "new" { _ = try sessions.send(id: session.id, source: "old", payload: try payload(), now: now) }
            let cancelled = try sessions.cancel(id: session.id, account: side, now: now + 1)
            XCTAssertEqual(cancelled.sessionState, .cancelled)
            XCTAssertEqual(cancelled.endedBy, side == "old" ? "source" : "destination")
            XCTAssertNil(cancelled.payload)
            XCTAssertEqual(accounts.states["old"], "active", "the source is active again")
            XCTAssertEqual(try sessions.cancel(id: session.id, account: side == "old" ? "new" : "old", now: now + 2), cancelled, "a retry answers the same")
            XCTAssertEqual(try sessions.receive(id: session.id, destination: "new", now: now + 2), .cancelled)
            XCTAssertEqual(try sessions.status(id: session.id, account: "old", now: now + 2).sessionState.sourceStatus, "cancelled")
            assertError(.invalidTransferState, status: 409) { _ = try self.sessions.send(id: session.id, source: "old", payload: try self.payload(), now: now + 2) }
            assertError(.invalidTransferState, status: 409) { _ = try self.sessions.complete(id: session.id, destination: "new", now: now + 2) }
        }
        XCTAssertTrue(accounts.keysMoved.isEmpty)
    }

    func testCompletedSessionsCannotBeCancelled() throws {
        let session = try sessions.create(destination: "new", appVersion: v("1.0.0"), now: now)
        _ = try sessions.confirm(id: session.id, source: "old", appVersion: v("1.0.0"), now: now)
        _ = try sessions.send(id: session.id, source: "old", payload: try payload(), now: now)
        _ = try sessions.complete(id: session.id, destination: "new", now: now)
        assertError(.invalidTransferState, status: 409) { _ = try self.sessions.cancel(id: session.id, account: "old", now: now) }
        assertError(.invalidTransferState, status: 409) { _ = try self.sessions.cancelAsAdmin(id: session.id, now: now) }
        XCTAssertEqual(accounts.states["old"], "transferred")
    }

    func testExpirySettlesOnReadAndOnTheTick() throws {
        // Settled on read: the source, transferring, is active again.
        let read = try sessions.create(destination: "new", appVersion: v("1.0.0"), now: now)
        _ = try sessions.confirm(id: read.id, source: "old", appVersion: v("1.0.0"), now: now)
        _ = try sessions.send(id: read.id, source: "old", payload: try payload(), now: now + 10)
        assertError(.invalidTransferState, status: 409) { _ = try self.sessions.complete(id: read.id, destination: "new", now: now + 3_600) }
        let expired = try sessions.status(id: read.id, account: "old", now: now + 3_600)
        XCTAssertEqual(expired.sessionState, .cancelled)
        XCTAssertEqual(expired.endedBy, "expiry")
        XCTAssertNil(expired.payload)
        XCTAssertEqual(accounts.states["old"], "active")
        XCTAssertEqual(try sessions.receive(id: read.id, destination: "new", now: now + 3_601), .cancelled)

        // Settled at the tick, including a session never confirmed; one still young stays.
        let unconfirmed = try sessions.create(destination: "new", appVersion: v("1.0.0"), now: now + 4_000)
        let young = try sessions.create(destination: "other-new", appVersion: v("1.0.0"), now: now + 7_000)
        XCTAssertEqual(try sessions.expireDue(now: now + 7_600), 1)
        XCTAssertEqual(try TransferSessionRepository(database: sessions.database).find(provider: sessions.provider, id: unconfirmed.id)?.state, "cancelled")
        XCTAssertEqual(try sessions.openSessions(now: now + 7_600).map(\.id), [young.id])
        // An expired `created` session is not handed back to a retried disclosure.
        XCTAssertNotEqual(try sessions.create(destination: "other-new", appVersion: v("1.0.0"), now: now + 11_000).id, young.id)
    }

    func testAdminCancelsAnyOpenSession() throws {
        let session = try sessions.create(destination: "new", appVersion: v("1.0.0"), now: now)
        let cancelled = try sessions.cancelAsAdmin(id: session.id, now: now + 1)
        XCTAssertEqual(cancelled.endedBy, "admin")
        XCTAssertEqual(try sessions.sessions(account: "new", now: now + 1).map(\.state), ["cancelled"])
    }

    func testSessionIDsAreRandomUUIDs() {
        let ids = Set((0..<100).map { _ in TransferSessions.newID() })
        XCTAssertEqual(ids.count, 100)
        for id in ids { XCTAssertNotNil(UUID(uuidString: id)); XCTAssertEqual(Array(id)[14], "4") }
    }

    func testPayloadMustBeAnECDHESA256GCMCompactJWE() throws {
        XCTAssertNoThrow(try EncryptedTransferPayload.validate(try payload()))
        let header = { (json: String) in Base64URL.encode(Array(json.utf8)) }
        let epk = try JWK(publicKey: PrivateKey(generatingFor: .ES256).publicKey, use: nil).jsonValue
        let tail = ".." + Base64URL.encode([UInt8](repeating: 1, count: 12)) + ".AAAA." + Base64URL.encode([UInt8](repeating: 2, count: 16))
        for bad in ["not a jwe", "a.b.c", "a.b.c.d.e.f",
                    header("{\"alg\":\"RSA-OAEP\",\"enc\":\"A256GCM\",\"epk\":\(epk)}") + tail,
                    header("{\"alg\":\"ECDH-ES\",\"enc\":\"A128GCM\",\"epk\":\(epk)}") + tail,
                    header("{\"alg\":\"ECDH-ES\",\"enc\":\"A256GCM\"}") + tail,
                    String(repeating: "A", count: EncryptedTransferPayload.maximumLength + 1)] {
            assertError(.badRequest, status: 400) { try EncryptedTransferPayload.validate(bad) }
        }
        XCTAssertNoThrow(try EncryptedTransferPayload.validate(header("{\"alg\":\"ECDH-ES\",\"enc\":\"A256GCM\",\"epk\":\(epk)}") + tail))
    }

    func testAppVersionsOrderAsSemVer() {
        XCTAssertLessThan(v("1.2.3"), v("1.10.0"))
        XCTAssertLessThan(v("1.0.0-alpha"), v("1.0.0"))
        XCTAssertLessThan(v("1.0.0-alpha.2"), v("1.0.0-alpha.10"))
        XCTAssertLessThan(v("1.0.0-1"), v("1.0.0-alpha"))
        XCTAssertEqual(v("1.0.0+build.5"), v("1.0.0"))
        for bad in ["", "1", "1.2", "1.2.3.4", "01.2.3", "a.b.c", "1.2.3-", "1.2.3-a..b"] { XCTAssertNil(AppVersion(bad), bad) }
    }
}
