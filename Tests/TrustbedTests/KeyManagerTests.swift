import Dispatch
import Foundation
import XCTest
import Cryptography
import Federation
import JOSE
import JSON
import Store
import Support
@testable import Trustbed

final class KeyManagerTests: XCTestCase {
    private var root = ""
    private var keys: String { root + "/Keys" }
    private var database: Database!
    private let clock = ManualClock(1_000_000)

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        database = try Database(path: root + "/trustbed.sqlite")
    }

    override func tearDown() {
        database = nil
        try? FileManager.default.removeItem(atPath: root)
    }

    private func entity(_ name: String, alg: SignatureAlgorithm = .ES256, lifetime: Int64 = 3_600) -> HostedEntity {
        HostedEntity(name: name, entityID: "http://x.test/\(name)", lifetime: lifetime, signingAlgorithm: alg)
    }

    private func manager(_ entities: [HostedEntity], reusing previous: KeyManager? = nil) -> KeyManager {
        KeyManager(directory: keys, entities: entities, database: database, clock: clock, reusing: previous)
    }

    private func pems(_ name: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "\(keys)/\(name)")) ?? []).filter { $0.hasSuffix(".pem") }
    }

    func testInitDoesNoKeyIOAndFirstUseGeneratesOnceAndRecords() throws {
        let entities = (0 ..< 1_000).map { entity("e\($0)") }
        let m = manager(entities)
        XCTAssertFalse(FileManager.default.fileExists(atPath: keys), "no key I/O before first use")
        XCTAssertEqual(try KeyHistoryRepository(database: database).keys(entity: "e1"), [])

        // Sixteen threads ask for the same entity's key at once: one key, one history row.
        let kids = Locked<Set<String>>([])
        let m2 = m
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            let kid = try? m2.signingKey(for: "http://x.test/e1").kid
            _ = kids.withLock { $0.insert(kid ?? "failed") }
        }
        XCTAssertEqual(kids.current.count, 1)
        XCTAssertFalse(kids.current.contains("failed"))
        XCTAssertEqual(pems("e1"), [kids.current.first! + ".pem"])
        XCTAssertEqual(try KeyHistoryRepository(database: database).keys(entity: "e1").map(\.kid), [kids.current.first!])
        XCTAssertEqual(try String(contentsOfFile: "\(keys)/e1/active", encoding: .utf8), kids.current.first! + "\n")
        XCTAssertEqual(pems("e2"), [], "an entity nobody asked for has no key")
        XCTAssertThrowsError(try m.signingKey(for: "http://x.test/unknown"))

        // A restart finds the same key rather than making one.
        XCTAssertEqual(try manager(entities).signingKey(for: "http://x.test/e1").kid, kids.current.first!)
    }

    /// When the table of loaded keys is full it starts over, but keeps the keys of entities that
    /// sign for others: a run of cold resolves over many leaves must not reload every superior.
    func testSuperiorsKeysSurviveWhenLoadedKeysStartOver() throws {
        let ta = HostedEntity(name: "ta", entityID: "http://x.test/ta", isTrustAnchor: true)
        let sup = HostedEntity(name: "sup", entityID: "http://x.test/sup", authorityHints: [ta.entityID])
        let leaves = (0 ..< 12).map { HostedEntity(name: "l\($0)", entityID: "http://x.test/l\($0)", authorityHints: [sup.entityID]) }
        let m = KeyManager(directory: keys, entities: [ta, sup] + leaves, database: database, clock: clock, loadedKeyLimit: 6)
        let supKey = try m.signingKey(for: sup.entityID).privateKey
        let taKey = try m.signingKey(for: ta.entityID).privateKey
        let firstLeaf = try m.signingKey(for: leaves[0].entityID).privateKey
        for leaf in leaves { _ = try m.signingKey(for: leaf.entityID) }
        XCTAssertTrue(try m.signingKey(for: sup.entityID).privateKey === supKey, "a superior's key stays loaded")
        XCTAssertTrue(try m.signingKey(for: ta.entityID).privateKey === taKey)
        XCTAssertFalse(try m.signingKey(for: leaves[0].entityID).privateKey === firstLeaf, "a leaf's key was dropped and read again")
    }

    func testTwoProcessesCreatingTheFirstKeyAgreeOnOne() throws {
        // Two managers over the same directory stand for two processes starting together.
        for round in 0 ..< 20 {
            let e = [entity("race\(round)")]
            let a = manager(e), b = manager(e)
            let kids = Locked<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { i in
                let kid = (try? (i == 0 ? a : b).signingKey(for: "http://x.test/race\(round)").kid) ?? "failed"
                kids.withLock { $0.append(kid) }
            }
            XCTAssertEqual(Set(kids.current).count, 1, "round \(round): \(kids.current)")
            XCTAssertEqual(pems("race\(round)"), [kids.current[0] + ".pem"], "the loser's key file is removed")
        }
    }

    /// `TRUSTBED_KEYS_SIZE=20000 TRUSTBED_KEYS_USED=200` measures the first-start case of the brief.
    func testManyEntitiesCostNothingUntilUsed() throws {
        let env = ProcessInfo.processInfo.environment
        let n = env["TRUSTBED_KEYS_SIZE"].flatMap(Int.init) ?? 2_000
        let used = env["TRUSTBED_KEYS_USED"].flatMap(Int.init) ?? 30
        let entities = (0 ..< n).map { entity("k\($0)") }
        var start = Date()
        let first = manager(entities)
        print("KeyManager: init for \(n) entities in \(String(format: "%.4f", Date().timeIntervalSince(start))) s")
        XCTAssertFalse(FileManager.default.fileExists(atPath: keys))
        start = Date()
        for e in entities.prefix(used) { _ = try first.signingKey(for: e.entityID) }
        print("KeyManager: first start, \(used) keys generated (PEM, pointer, fsync, history) in \(String(format: "%.3f", Date().timeIntervalSince(start))) s")

        start = Date()
        let restarted = manager(entities)
        for e in entities.prefix(used) { _ = try restarted.publicKeys(for: e.entityID) }
        print("KeyManager: restart, \(used) existing keys loaded in \(String(format: "%.3f", Date().timeIntervalSince(start))) s")
        XCTAssertEqual(try restarted.signingKey(for: entities[0].entityID).kid, try first.signingKey(for: entities[0].entityID).kid)
    }

    func testChangedSigningAlgorithmRotates() throws {
        let old = try manager([entity("a")]).signingKey(for: "http://x.test/a")
        let m = manager([entity("a", alg: .ES384, lifetime: 600)])
        let new = try m.signingKey(for: "http://x.test/a")
        XCTAssertEqual(new.algorithm, .ES384)
        XCTAssertNotEqual(new.kid, old.kid)
        XCTAssertEqual(try m.publicKeys(for: "http://x.test/a").keys.compactMap(\.kid), [new.kid, old.kid], "the old key stays published until its exp")
        XCTAssertEqual(try m.historicalKeys(for: "http://x.test/a").first?.json["exp"], .int(1_000_600))
        clock.advance(601)
        XCTAssertEqual(try m.publicKeys(for: "http://x.test/a").keys.compactMap(\.kid), [new.kid])
    }

    func testReuseKeepsLoadedKeysAndInvalidateRereads() throws {
        let e = [entity("a"), entity("b")]
        let first = manager(e)
        let kid = try first.signingKey(for: "http://x.test/a").kid
        // The history is held, not queried per call: a change in the database shows only after invalidate().
        try KeyHistoryRepository(database: database).recordActive(entity: "a", kid: "other", jwk: #"{"kty":"EC"}"#, createdAt: 1)

        // Reuse: no file is read again (the key survives its PEM being gone).
        try FileManager.default.removeItem(atPath: "\(keys)/a/\(kid).pem")
        let second = manager(e, reusing: first)
        XCTAssertEqual(try second.signingKey(for: "http://x.test/a").kid, kid)

        // A rotation by the CLI: invalidate, then the next manager reads the new pointer.
        try FileManager.default.removeItem(atPath: "\(keys)/a")
        let (_, rotated) = try KeyManager.rotate(name: "a", algorithm: .ES256, lifetime: 60, directory: keys, database: database, clock: clock)
        XCTAssertEqual(try manager(e, reusing: second).signingKey(for: "http://x.test/a").kid, kid, "still the reused key before invalidate()")
        second.invalidate()
        XCTAssertEqual(try manager(e, reusing: second).signingKey(for: "http://x.test/a").kid, rotated)
        // Invalidating one entity re-reads only that one.
        let fourth = manager(e, reusing: second)
        let bKid = try fourth.signingKey(for: "http://x.test/b").kid
        try FileManager.default.removeItem(atPath: "\(keys)/b")
        fourth.invalidate(entities: ["b"])
        XCTAssertNotEqual(try fourth.signingKey(for: "http://x.test/b").kid, bKid, "b's folder is gone: a new key")
        XCTAssertEqual(try fourth.signingKey(for: "http://x.test/a").kid, rotated)
        // A changed signing_alg is not reused.
        let third = manager([entity("a", alg: .EdDSA)], reusing: second)
        XCTAssertEqual(try third.signingKey(for: "http://x.test/a").algorithm, .EdDSA)
    }

    func testRevokingARetiredKeyRemovesItFromJWKSAtOnce() throws {
        let e = [entity("a")]
        let first = try manager(e).signingKey(for: "http://x.test/a").kid
        let (_, second) = try KeyManager.rotate(name: "a", algorithm: .ES256, lifetime: 3_600, directory: keys, database: database, clock: clock)
        XCTAssertEqual(try manager(e).publicKeys(for: "http://x.test/a").keys.compactMap(\.kid), [second, first])

        clock.advance(10)
        let rotated = try KeyManager.revoke(name: "a", kid: first, reason: .compromised, algorithm: .ES256, lifetime: 3_600,
                                            directory: keys, database: database, clock: clock)
        XCTAssertNil(rotated, "a retired key is revoked without a rotation")
        let m = manager(e)
        XCTAssertEqual(try m.publicKeys(for: "http://x.test/a").keys.compactMap(\.kid), [second])
        let historical = try m.historicalKeys(for: "http://x.test/a")
        XCTAssertEqual(historical.count, 1)
        XCTAssertEqual(historical[0].kid, first)
        XCTAssertEqual(historical[0].json["revoked"], ["revoked_at": .int(1_000_010), "reason": "compromised"])
        XCTAssertEqual(historical[0].json["iat"], .int(1_000_000))
        XCTAssertEqual(historical[0].json["exp"], .int(1_003_600))
    }

    func testRevokingTheActiveKeyRotatesFirst() throws {
        let e = [entity("a")]
        let old = try manager(e).signingKey(for: "http://x.test/a").kid
        let new = try XCTUnwrap(try KeyManager.revoke(name: "a", kid: old, reason: nil, algorithm: .ES256, lifetime: 3_600,
                                                       directory: keys, database: database, clock: clock))
        let m = manager(e)
        XCTAssertEqual(try m.signingKey(for: "http://x.test/a").kid, new)
        XCTAssertEqual(try m.publicKeys(for: "http://x.test/a").keys.compactMap(\.kid), [new], "the revoked key is not published")
        let revoked = try XCTUnwrap(try m.historicalKeys(for: "http://x.test/a").first)
        XCTAssertEqual(revoked.kid, old)
        XCTAssertEqual(revoked.json["revoked"], ["revoked_at": .int(1_000_000)], "no reason given: none published")
    }

    func testRevokingAKeyOnlyOnDiskAndUnknownKids() throws {
        // The server never used this entity, so its key is in no history yet.
        let files = KeyFiles(root: keys, name: "a")
        let kid = try files.loadOrCreate(algorithm: .ES256).kid
        XCTAssertNotNil(try KeyManager.revoke(name: "a", kid: kid, reason: .superseded, algorithm: .ES256, lifetime: 60,
                                              directory: keys, database: database, clock: clock))
        XCTAssertEqual(try KeyHistoryRepository(database: database).keys(entity: "a").first { $0.kid == kid }?.revocationReason, "superseded")

        XCTAssertThrowsError(try KeyManager.revoke(name: "a", kid: "nope", reason: nil, algorithm: .ES256, lifetime: 60,
                                                   directory: keys, database: database, clock: clock)) { error in
            XCTAssertEqual("\(error)", "a has no key nope")
        }
        XCTAssertThrowsError(try KeyManager.revoke(name: "b", kid: kid, reason: nil, algorithm: .ES256, lifetime: 60,
                                                   directory: keys, database: database, clock: clock))
    }

    func testRevocationReasons() {
        XCTAssertEqual(KeyRevocationReason(argument: "compromised"), .compromised)
        XCTAssertEqual(KeyRevocationReason(argument: "keyCompromise"), .compromised)
        XCTAssertEqual(KeyRevocationReason(argument: "superseded"), .superseded)
        XCTAssertEqual(KeyRevocationReason(argument: "unspecified"), .unspecified)
        XCTAssertNil(KeyRevocationReason(argument: "stolen"))
    }
}
