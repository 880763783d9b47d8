import Store
import WalletProvider
import XCTest

/// Item 8's `valid` state on the database, computed from the issued-credential records: an
/// instance past `installed` is `valid` while a live PID sits on a key its provider attested
/// for it; a PID that expires, is revoked, suspended or deleted takes it back to `operational`;
/// a PID to another instance of the same person supersedes the first one's PIDs.
final class WalletInstanceValidityTests: XCTestCase {
    private let provider = "https://wp.example/wallet-provider"
    private let issuer = "https://pid.example/pid-provider"
    private let list = "https://pid.example/pid-provider/status/1"
    private var database: Database!
    private var repository: WalletInstanceRepository!
    private var validity: WalletInstanceValidity!
    private var credentials: IssuedCredentialRepository!

    override func setUpWithError() throws {
        database = try Database(path: ":memory:")
        repository = WalletInstanceRepository(database: database)
        validity = WalletInstanceValidity(database: database)
        credentials = IssuedCredentialRepository(database: database)
        try StatusListRepository(database: database).insert(StatusListRecord(uri: list, issuer: issuer, bits: 2, size: 16, createdAt: 1))
        try addInstance("tag", account: "acc", state: "operational", keys: ["k1", "k2"])
    }

    private func addInstance(_ id: String, account: String, state: String, keys: [String]) throws {
        XCTAssertTrue(try repository.insertWithNewAccount(WalletInstanceRecord(
            provider: provider, id: id, account: account, hardwareJWK: "{}", hardwareJWKThumbprint: "hw-" + id, format: "dev",
            deviceFacts: "{}", state: state, createdAt: 1, updatedAt: 1)))
        try repository.recordAttestedKeys(provider: provider, instance: id, thumbprints: keys, now: 2)
    }

    private var index = 0
    /// A PID issued at 10 to `key`, expiring at `expires`, attested by `attester`.
    @discardableResult
    private func issue(_ id: String, key: String, persona: String = "erika", expires: Int64 = 1_000,
                       attester: String? = nil) throws -> IssuedCredentialRecord {
        index += 1
        let record = IssuedCredentialRecord(id: id, issuer: issuer, persona: persona, configurationID: "urn:eudi:pid:1",
                                            statusURI: list, statusIndex: index, keyThumbprint: key, notificationID: "n-" + id,
                                            issuedAt: 10, expiresAt: expires, keyAttestationIssuer: attester ?? provider)
        try credentials.insert(record)
        return record
    }

    private func state(_ id: String = "tag") throws -> String? { try repository.find(provider: provider, id: id)?.state }

    func testOperationalToValidAndBackWhenThePIDIsRevoked() throws {
        try issue("c1", key: "k2")
        XCTAssertEqual(try validity.pidIssued(provider: provider, keyThumbprint: "k2", persona: "erika", now: 5)?.state, "valid")
        XCTAssertEqual(try state(), "valid")
        XCTAssertTrue(try credentials.setStatus(id: "c1", issuer: nil, status: 1))
        XCTAssertEqual(try validity.pidWithdrawn(provider: provider, keyThumbprint: "k2", now: 7), "tag")
        XCTAssertEqual(try state(), "operational")
        XCTAssertEqual(try repository.find(provider: provider, id: "tag")?.updatedAt, 7)
        // Reinstated (status valid again): valid again at the next settle.
        XCTAssertTrue(try credentials.setStatus(id: "c1", issuer: nil, status: 0))
        XCTAssertEqual(try validity.pidWithdrawn(provider: provider, keyThumbprint: "k2", now: 8), "tag")
        XCTAssertEqual(try state(), "valid")
    }

    func testAnotherLivePIDKeepsTheInstanceValid() throws {
        try issue("c1", key: "k1")
        try issue("c2", key: "k2")
        _ = try validity.pidIssued(provider: provider, keyThumbprint: "k2", persona: "erika", now: 5)
        XCTAssertTrue(try credentials.setStatus(id: "c2", issuer: nil, status: 2), "suspended")
        XCTAssertNil(try validity.pidWithdrawn(provider: provider, keyThumbprint: "k2", now: 6))
        XCTAssertEqual(try state(), "valid", "c1 still counts")
        XCTAssertEqual(try credentials.recordNotification(issuer: issuer, notificationID: "n-c1", persona: "erika",
                                                          event: "credential_deleted"), 1)
        XCTAssertEqual(try validity.pidWithdrawn(provider: provider, keyThumbprint: "k1", now: 7), "tag")
        XCTAssertEqual(try state(), "operational", "a suspended and a deleted PID do not count")
    }

    func testAnExpiredPIDIsSettledByTheNextSweep() throws {
        try issue("c1", key: "k1", expires: 100)
        _ = try validity.pidIssued(provider: provider, keyThumbprint: "k1", persona: "erika", now: 50)
        XCTAssertEqual(try state(), "valid")
        XCTAssertTrue(try validity.settle(provider: provider, now: 99).isEmpty)
        XCTAssertEqual(try validity.settle(provider: nil, now: 100).map(\.id), ["tag"])
        XCTAssertEqual(try state(), "operational")
        XCTAssertEqual(try repository.find(provider: provider, id: "tag")?.updatedAt, 100)
    }

    func testASecondInstanceOfThePersonSupersedesTheFirst() throws {
        try addInstance("tag-2", account: "acc-2", state: "operational", keys: ["k3"])
        try addInstance("tag-other", account: "acc-3", state: "operational", keys: ["k4"])
        try issue("c1", key: "k1")
        try issue("c2", key: "k2")
        try issue("c-other", key: "k4", persona: "mario")
        _ = try validity.pidIssued(provider: provider, keyThumbprint: "k1", persona: "erika", now: 5)
        _ = try validity.pidIssued(provider: provider, keyThumbprint: "k4", persona: "mario", now: 5)
        XCTAssertEqual(try state(), "valid")

        try issue("c3", key: "k3")
        let issued = try XCTUnwrap(try validity.pidIssued(provider: provider, keyThumbprint: "k3", persona: "erika", now: 6))
        XCTAssertEqual(issued.instance, "tag-2")
        XCTAssertEqual(issued.state, "valid")
        XCTAssertEqual(issued.superseded, [SupersededCredential(id: "c1", issuer: issuer, instance: "tag"),
                                           SupersededCredential(id: "c2", issuer: issuer, instance: "tag")])
        XCTAssertEqual(try credentials.find(id: "c1")?.status, 1)
        XCTAssertEqual(try credentials.find(id: "c2")?.status, 1)
        XCTAssertEqual(try credentials.find(id: "c3")?.status, 0)
        XCTAssertEqual(try state(), "operational")
        XCTAssertEqual(try state("tag-2"), "valid")
        XCTAssertEqual(try state("tag-other"), "valid", "another person's instance is left alone")
        XCTAssertEqual(try credentials.find(id: "c-other")?.status, 0)
    }

    /// The superseded instance keeps `valid` while it holds another live PID (here another
    /// person's on the same instance); expired and deleted ones do not count.
    func testASupersededInstanceWithAnotherLivePIDStaysValid() throws {
        try addInstance("tag-2", account: "acc-2", state: "operational", keys: ["k3"])
        try repository.recordAttestedKeys(provider: provider, instance: "tag", thumbprints: ["k5", "k6"], now: 2)
        try issue("c1", key: "k1")
        try issue("c-mario", key: "k2", persona: "mario")
        try issue("c-expired", key: "k5", expires: 6)
        try issue("c-deleted", key: "k6", persona: "zoe")
        XCTAssertEqual(try credentials.recordNotification(issuer: issuer, notificationID: "n-c-deleted", persona: "zoe",
                                                          event: "credential_deleted"), 1)
        _ = try validity.pidIssued(provider: provider, keyThumbprint: "k1", persona: "erika", now: 5)
        XCTAssertEqual(try state(), "valid")
        try issue("c3", key: "k3")
        let issued = try XCTUnwrap(try validity.pidIssued(provider: provider, keyThumbprint: "k3", persona: "erika", now: 7))
        XCTAssertEqual(issued.superseded, [SupersededCredential(id: "c1", issuer: issuer, instance: "tag")])
        XCTAssertEqual(try state(), "valid", "mario's PID is still live there")
        XCTAssertEqual(try repository.find(provider: provider, id: "tag")?.updatedAt, 5, "a state that does not change keeps its time")
        XCTAssertEqual(try credentials.find(id: "c-mario")?.status, 0)
        XCTAssertEqual(try credentials.find(id: "c-expired")?.status, 0, "expired: not live, left as it is")

        // Once mario's PID is revoked, the next PID of erika elsewhere leaves it operational.
        XCTAssertTrue(try credentials.setStatus(id: "c-mario", issuer: nil, status: 1))
        try addInstance("tag-3", account: "acc-3", state: "operational", keys: ["k7"])
        try issue("c4", key: "k7")
        _ = try validity.pidIssued(provider: provider, keyThumbprint: "k7", persona: "erika", now: 8)
        XCTAssertEqual(try state("tag-2"), "operational")
        XCTAssertEqual(try repository.find(provider: provider, id: "tag-2")?.updatedAt, 8)
        XCTAssertEqual(try state("tag-3"), "valid")
    }

    func testOtherStatesProvidersAndKeysAreLeftAlone() throws {
        try addInstance("tag-installed", account: "acc-2", state: "installed", keys: ["k3"])
        try issue("c1", key: "k3")
        let issued = try validity.pidIssued(provider: provider, keyThumbprint: "k3", persona: "erika", now: 5)
        XCTAssertEqual(issued?.state, "installed")
        XCTAssertEqual(issued?.superseded, [], "an installed instance supersedes nothing")
        XCTAssertNil(try validity.pidIssued(provider: "https://other.example/wp", keyThumbprint: "k1", persona: "erika", now: 5))
        XCTAssertNil(try validity.pidIssued(provider: provider, keyThumbprint: "never-attested", persona: "erika", now: 5))
        // A credential attested by another provider for a key of the same thumbprint does not count.
        try issue("c2", key: "k1", attester: "https://other.example/wp")
        XCTAssertTrue(try validity.settle(provider: provider, now: 5).isEmpty)
        XCTAssertEqual(try state(), "operational")
        XCTAssertNil(try validity.pidWithdrawn(provider: provider, keyThumbprint: "k1", now: 5))
    }

    func testAKeyAttestedAgainKeepsItsFirstInstanceAndPurgeForgetsIt() throws {
        try repository.recordAttestedKeys(provider: provider, instance: "other", thumbprints: ["k1"], now: 3)
        XCTAssertEqual(try repository.instance(provider: provider, attestedKey: "k1"), "tag")
        XCTAssertEqual(try repository.purgeAccount(provider: provider, account: "acc"), 2)
        XCTAssertNil(try repository.instance(provider: provider, attestedKey: "k1"))
    }
}
