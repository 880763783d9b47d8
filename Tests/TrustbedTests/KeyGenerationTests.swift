import Foundation
import XCTest
import Cryptography
import Federation
import JOSE
import Store
import Support
@testable import Trustbed

/// First-start key generation in bulk, and publishing public keys without the private ones.
final class KeyGenerationTests: XCTestCase {
    private var root = ""
    private var database: Database!
    private let clock = ManualClock(1_000_000)

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("keygen-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        database = try Database(path: root + "/trustbed.sqlite")
    }

    override func tearDown() {
        database = nil
        try? FileManager.default.removeItem(atPath: root)
    }

    private func entities(_ n: Int) -> [HostedEntity] {
        (0..<n).map { HostedEntity(name: "e\($0)", entityID: "http://x.test/e\($0)") }
    }

    func testGenerateMissingMakesEveryKeyOnceAndRecordsIt() throws {
        let list = entities(300)
        let first = KeyManager(directory: root + "/Keys", entities: list, database: database, clock: clock)
        // One entity already has a key (made on first use); it must be kept, not replaced.
        let existing = try first.signingKey(for: "http://x.test/e7").kid
        XCTAssertEqual(first.generateMissing(batch: 64) { false }, 299)
        XCTAssertEqual(first.generateMissing(batch: 64) { false }, 0, "a second run finds nothing to do")

        let history = KeyHistoryRepository(database: database)
        for e in list {
            let records = try history.keys(entity: e.name)
            XCTAssertEqual(records.count, 1, e.name)
            let active = try String(contentsOfFile: root + "/Keys/\(e.name)/active", encoding: .utf8)
            XCTAssertEqual(active, records[0].kid + "\n")
        }
        XCTAssertEqual(try history.keys(entity: "e7").first?.kid, existing)

        // A fresh manager (a restart) signs with exactly the generated key.
        let restarted = KeyManager(directory: root + "/Keys", entities: list, database: database, clock: clock)
        XCTAssertEqual(try restarted.signingKey(for: "http://x.test/e42").kid, try history.keys(entity: "e42").first?.kid)
    }

    func testStopEndsGenerationEarly() {
        let m = KeyManager(directory: root + "/Keys", entities: entities(100), database: database, clock: clock)
        XCTAssertEqual(m.generateMissing(batch: 10) { true }, 0)
    }

    /// The stop flag is read before each key, not only between batches: a server shutting down
    /// waits for the generator, so that exit() never tears OpenSSL down under a key being made.
    func testStopDuringABatchEndsItWithinAFewKeys() throws {
        let m = KeyManager(directory: root + "/Keys", entities: entities(512), database: database, clock: clock)
        let asked = Locked(0)
        let made = m.generateMissing(batch: 512) { asked.withLock { n in n += 1; return n > 20 } }
        XCTAssertGreaterThan(made, 0)
        XCTAssertLessThan(made, 100, "the batch of 512 ran on after the stop")
        // What was made before the stop is recorded, so the next start adopts it.
        let history = KeyHistoryRepository(database: database)
        let recorded = try entities(512).filter { try !history.keys(entity: $0.name).isEmpty }.count
        XCTAssertEqual(recorded, made)
    }

    /// The public keys of an entity come from the history without reading its PEM, so a
    /// superior can vouch for 100,000 subordinates without holding their private keys.
    func testPublicKeysWithoutThePrivateKey() throws {
        let list = entities(3)
        let m = KeyManager(directory: root + "/Keys", entities: list, database: database, clock: clock)
        _ = m.generateMissing { false }
        // Make the PEM unreadable: a path that loaded the private key would now fail.
        let kid = try XCTUnwrap(KeyHistoryRepository(database: database).keys(entity: "e1").first?.kid)
        let restarted = KeyManager(directory: root + "/Keys", entities: list, database: database, clock: clock)
        try FileManager.default.removeItem(atPath: root + "/Keys/e1/\(kid).pem")
        let published = try restarted.publicKeys(for: "http://x.test/e1")
        XCTAssertEqual(published.keys.map(\.kid), [kid])
        XCTAssertThrowsError(try restarted.signingKey(for: "http://x.test/e1"))
    }
}
