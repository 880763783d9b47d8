import Cryptography
import Foundation
import JOSE
import JSON
import Store
import Support
@testable import WalletProvider
import XCTest

/// `start_pin_recovery` and `create_proofs {"renewal": true}` (issue 21, items 3 and 4), and what
/// a disclosure does to an account in `recovering_pin` or `renewing` (PINRecovery, PIDRenewal).
final class RecoveryInstructionTests: XCTestCase {
    private let issuer = "https://issuer.example/pid-provider"

    private func accountID(_ f: WalletProviderFixture, _ nl: NLDevice) throws -> String {
        try XCTUnwrap(WalletInstanceRepository(database: f.provider.database).find(provider: f.provider.entityID, id: nl.tag)).account
    }

    private func account(_ f: WalletProviderFixture, _ nl: NLDevice) throws -> WalletAccountRecord {
        try XCTUnwrap(WalletAccountRepository(database: f.provider.database).find(provider: f.provider.entityID, id: accountID(f, nl)))
    }

    private func keys(_ f: WalletProviderFixture, _ nl: NLDevice) throws -> [HeldKeyRecord] {
        try HeldKeyRepository(database: f.provider.database).list(provider: f.provider.entityID, account: accountID(f, nl))
    }

    private func recoveryParams(_ pinKey: PrivateKey, count: Int = 2) -> [String: JSONValue] {
        ["pin_public_key": JWK(publicKey: pinKey.publicKey).keyMembersOnly.jsonValue, "c_nonce": "c-nonce-1",
         "aud": .string(issuer), "count": .int(Int64(count))]
    }

    /// Runs `body` as a disclosure's perform would: in a transaction, with the account as stored.
    private func inDisclosure<T>(_ f: WalletProviderFixture, _ nl: NLDevice, _ body: (InstructionContext) throws -> T) throws -> T {
        let instance = try XCTUnwrap(WalletInstanceRepository(database: f.provider.database).find(provider: f.provider.entityID, id: nl.tag))
        return try f.provider.database.transaction { database in
            let current = try XCTUnwrap(WalletAccountRepository(database: database).find(provider: f.provider.entityID, id: instance.account))
            return try body(InstructionContext(provider: f.provider, database: database, account: current, instance: instance,
                                               challenge: "c", now: f.clock.now()))
        }
    }

    func testStartPINRecoveryFromABlockedAccount() throws {
        var configuration = remoteKeysConfiguration()
        configuration.pinAttempts = 2
        let f = try WalletProviderFixture.make(configuration: configuration)
        let nl = try NLDevice.register(f.provider)
        _ = try nl.run(f.provider, "generate_keys", ["count": 1])
        let oldPIN = try account(f, nl).pinPublicKey
        let wrong = try PrivateKey(generatingFor: .ES256)
        for _ in 0..<2 { _ = refusal { _ = try nl.run(f.provider, "generate_keys", signer: wrong) } }
        XCTAssertEqual(try account(f, nl).state, "blocked")

        let newPIN = try PrivateKey(generatingFor: .ES256)
        // Without a recovery code disclosed before, nothing could prove the person: refused.
        XCTAssertEqual(refusal { _ = try nl.run(f.provider, "start_pin_recovery", recoveryParams(newPIN), signer: newPIN) }?.codeValue,
                       .invalidRequest)
        XCTAssertEqual(try account(f, nl).state, "blocked")
        XCTAssertTrue(try WalletAccountRepository(database: f.provider.database).storeRecoveryCodeHMAC(
            provider: f.provider.entityID, id: accountID(f, nl), hmac: f.provider.recoveryCodeHMAC("code-a"), now: f.clock.now()))
        // Signed by anything but the new PIN key it carries: refused, and not a PIN attempt.
        let forged = refusal { _ = try nl.run(f.provider, "start_pin_recovery", recoveryParams(newPIN), signer: wrong) }
        XCTAssertEqual(forged?.codeValue, .invalidRequest)
        XCTAssertEqual(try account(f, nl).state, "blocked")
        // Params of the wrong shape.
        for bad: [String: JSONValue] in [["aud": .string(issuer)], ["pin_public_key": "x", "aud": .string(issuer)],
                                         recoveryParams(newPIN).merging(["count": 11]) { $1 },
                                         recoveryParams(newPIN).merging(["aud": 7]) { $1 }] {
            XCTAssertEqual(refusal { _ = try nl.run(f.provider, "start_pin_recovery", bad, signer: newPIN) }?.codeValue, .invalidInstruction)
        }

        let result = try nl.run(f.provider, "start_pin_recovery", recoveryParams(newPIN), signer: newPIN)
        XCTAssertEqual(result["state"], "recovering_pin")
        let stored = try account(f, nl)
        XCTAssertEqual(stored.state, "recovering_pin")
        XCTAssertEqual(stored.previousState, "blocked")
        XCTAssertEqual(stored.pinPublicKey, oldPIN, "the old PIN key stays until a matching disclosure")
        XCTAssertEqual(stored.pendingPINPublicKey.flatMap { try? JWK(json: JSONValue.parse(Array($0.utf8)).objectValue ?? [:]).thumbprint() },
                       JWK(publicKey: newPIN.publicKey).thumbprint())

        // The PIN certificate binds the new PIN key to the account, signed by the provider.
        let certificate = try XCTUnwrap(result["pin_certificate"]?.stringValue)
        let (jws, claims) = try JWS.parseClaims(certificate)
        try jws.verify(keys: JWKSet(keys: [f.provider.keys.signingJWK]), allowList: [.ES256], expectedType: PINCertificate.type)
        XCTAssertEqual(claims["sub"]?.stringValue, try accountID(f, nl))
        XCTAssertEqual(claims["instance"]?.stringValue, nl.tag)
        XCTAssertEqual(try JWK(json: XCTUnwrap(claims["cnf"]?["jwk"]?.objectValue)).thumbprint(), JWK(publicKey: newPIN.publicKey).thumbprint())
        // A fresh wallet attestation for a key the provider holds.
        let attestation = try XCTUnwrap(result["wallet_attestation"]?.stringValue)
        let (attestationJWS, attestationClaims) = try JWS.parseClaims(attestation)
        XCTAssertEqual(attestationJWS.type, WalletProvider.walletAttestationType)
        let attestationKeyID = try XCTUnwrap(result["wallet_attestation_key_id"]?.stringValue)
        let attestationKey = try XCTUnwrap(keys(f, nl).first { $0.id == attestationKeyID })
        XCTAssertEqual(try JWK(json: XCTUnwrap(attestationClaims["cnf"]?["jwk"]?.objectValue)).thumbprint(), attestationKey.thumbprint)
        // Proofs by two new recovery keys, with their key attestation, for the PID issuer.
        let proofs = try XCTUnwrap(result["proofs"]?.arrayValue?.compactMap(\.stringValue))
        XCTAssertEqual(proofs.count, 2)
        let proofClaims = try JWS.parseClaims(proofs[0]).claims
        XCTAssertEqual(proofClaims["aud"]?.stringValue, issuer)
        XCTAssertEqual(proofClaims["nonce"], "c-nonce-1")
        XCTAssertEqual(try keys(f, nl).filter { $0.purpose == PINRecovery.keyPurpose }.count, 2)

        // No PIN works meanwhile: the old one is refused, the new one too (only a disclosure finishes).
        XCTAssertEqual(refusal { _ = try nl.run(f.provider, "generate_keys") }?.codeValue, .invalidAccountState)
        XCTAssertEqual(refusal { _ = try nl.run(f.provider, "generate_keys", signer: newPIN) }?.codeValue, .invalidAccountState)

        // A retry replaces the unused recovery keys and keeps the remembered state.
        let again = try nl.run(f.provider, "start_pin_recovery", recoveryParams(newPIN, count: 1), signer: newPIN)
        XCTAssertEqual(again["proofs"]?.arrayValue?.count, 1)
        XCTAssertEqual(try keys(f, nl).filter { $0.purpose == PINRecovery.keyPurpose }.count, 1)
        XCTAssertEqual(try account(f, nl).previousState, "blocked")

        // A matching disclosure of a PID on a recovery key: the new PIN key counts, the recovery keys go.
        let recoveryKey = try XCTUnwrap(keys(f, nl).first { $0.purpose == PINRecovery.keyPurpose })
        let walletKey = try XCTUnwrap(keys(f, nl).first { $0.purpose == HeldKeyRecord.walletPurpose })
        XCTAssertEqual(refusal { _ = try self.inDisclosure(f, nl) { try PINRecovery.complete(in: $0, pidKey: walletKey) } }?.codeValue,
                       .invalidRequest, "a PID on another key proves nothing about this recovery")
        XCTAssertEqual(try inDisclosure(f, nl) { try PINRecovery.complete(in: $0, pidKey: recoveryKey) }, .active)
        let recovered = try account(f, nl)
        XCTAssertEqual(recovered.state, "active")
        XCTAssertNil(recovered.previousState)
        XCTAssertNil(recovered.pendingPINPublicKey)
        XCTAssertEqual(recovered.pinFailures, 0)
        XCTAssertEqual(try keys(f, nl).filter { $0.purpose == PINRecovery.keyPurpose }.count, 0)
        var recoveredDevice = nl
        recoveredDevice.pinKey = newPIN
        _ = try recoveredDevice.run(f.provider, "generate_keys")
        XCTAssertEqual(refusal { _ = try nl.run(f.provider, "generate_keys") }?.codeValue, .invalidPIN, "the old PIN is gone")
    }

    private func insertPID(_ f: WalletProviderFixture, key: HeldKeyRecord, index: Int, status: Int, expiresAt: Int64) throws {
        let uri = issuer + "/status/1"
        try f.provider.database.execute("INSERT OR IGNORE INTO status_lists (uri, issuer, bits, size, created_at) VALUES (?, ?, 2, 65536, 0)",
                                        [.text(uri), .text(issuer)])
        try f.provider.database.execute(
            """
            INSERT INTO issued_credentials (id, issuer, persona, configuration_id, status_uri, status_list, status_index, status,
                key_thumbprint, issued_at, expires_at, key_attestation_issuer)
            VALUES (?1, ?2, 'p', 'urn:eudi:pid:1', ?3, (SELECT id FROM status_lists WHERE uri = ?3), ?4, ?5, ?6, 0, ?7, ?8)
            """,
            [.text("cred-\(index)"), .text(issuer), .text(uri), .integer(Int64(index)), .integer(Int64(status)), .text(key.thumbprint),
             .integer(expiresAt), .text(f.provider.entityID)])
    }

    func testRenewalOnlyWhenThePIDIsNoLongerValidAndAMismatchRestoresEverything() throws {
        let f = try WalletProviderFixture.make(configuration: remoteKeysConfiguration())
        let nl = try NLDevice.register(f.provider)
        _ = try nl.run(f.provider, "create_proofs", ["aud": .string(issuer), "count": 2])
        let pidKey = try XCTUnwrap(keys(f, nl).first)
        try insertPID(f, key: pidKey, index: 1, status: 0, expiresAt: f.clock.now() + 86_400)
        let renewal: [String: JSONValue] = ["aud": .string(issuer), "nonce": "n", "renewal": true, "count": 1]

        let notNeeded = refusal { _ = try nl.run(f.provider, "create_proofs", renewal) }
        XCTAssertEqual(notNeeded?.codeValue, .renewalNotNeeded)
        XCTAssertEqual(notNeeded?.statusCode, 403)
        XCTAssertEqual(try account(f, nl).state, "active")
        XCTAssertEqual(refusal { _ = try nl.run(f.provider, "create_proofs", renewal.merging(["renewal": "yes"]) { $1 }) }?.codeValue,
                       .invalidInstruction)

        // Revoked (the PID Provider's status list says invalid): renewal starts.
        try f.provider.database.execute("UPDATE issued_credentials SET status = 1")
        let before = try keys(f, nl)
        let started = try nl.run(f.provider, "create_proofs", renewal)
        XCTAssertEqual(started["proofs"]?.arrayValue?.count, 1)
        XCTAssertEqual(try account(f, nl).state, "renewing")
        let during = try keys(f, nl)
        XCTAssertEqual(during.filter { $0.purpose == PIDRenewal.keyPurpose && $0.enabled }.count, 1)
        XCTAssertTrue(during.filter { $0.purpose != PIDRenewal.keyPurpose }.allSatisfy { !$0.enabled }, "every other key is disabled")
        XCTAssertEqual(refusal { _ = try nl.run(f.provider, "sign", ["key_id": .string(pidKey.id), "payload": "AAAA"]) }?.codeValue,
                       .invalidAccountState)
        XCTAssertEqual(refusal { _ = try nl.run(f.provider, "create_proofs", ["aud": .string(issuer)]) }?.codeValue, .invalidAccountState)
        // A retry replaces the unused renewal key.
        _ = try nl.run(f.provider, "create_proofs", renewal)
        XCTAssertEqual(try keys(f, nl).filter { $0.purpose == PIDRenewal.keyPurpose }.count, 1)

        // Mismatch: exactly as before.
        XCTAssertEqual(try inDisclosure(f, nl) { try PIDRenewal.abandon(in: $0) }, .active)
        XCTAssertEqual(try keys(f, nl), before)
        let restored = try account(f, nl)
        XCTAssertEqual(restored.state, "active")
        XCTAssertNil(restored.previousState)

        // Expired (status valid): renewal starts again; a matching disclosure keeps the new keys.
        try f.provider.database.execute("UPDATE issued_credentials SET status = 0, expires_at = ?", [.integer(f.clock.now() - 1)])
        _ = try nl.run(f.provider, "create_proofs", renewal)
        let renewalKey = try XCTUnwrap(keys(f, nl).first { $0.purpose == PIDRenewal.keyPurpose })
        XCTAssertEqual(refusal { _ = try self.inDisclosure(f, nl) { try PIDRenewal.complete(in: $0, pidKey: pidKey) } }?.codeValue,
                       .invalidRequest, "the old PID does not finish a renewal")
        XCTAssertEqual(try inDisclosure(f, nl) { try PIDRenewal.complete(in: $0, pidKey: renewalKey) }, .active)
        let after = try keys(f, nl)
        XCTAssertEqual(after.count, before.count + 1)
        XCTAssertTrue(after.allSatisfy { $0.enabled && $0.purpose == HeldKeyRecord.walletPurpose })
        XCTAssertEqual(try account(f, nl).state, "active")
        _ = try nl.run(f.provider, "sign", ["key_id": .string(pidKey.id), "payload": "AAAA"])
    }
}
