import Cryptography
import JOSE
import JSON
import Store
import Support
@testable import WalletProvider
import XCTest

/// Device transfer's instructions on real NL accounts (the store's `TransferAccounts`): held keys
/// move, the source ends `transferred` and is refused attestations; the framework's account
/// states and the session's state both guard every step.
final class TransferInstructionTests: XCTestCase {
    private func account(_ f: WalletProviderFixture, _ nl: NLDevice) throws -> WalletAccountRecord {
        let instance = try XCTUnwrap(WalletInstanceRepository(database: f.provider.database).find(provider: f.provider.entityID, id: nl.tag))
        return try XCTUnwrap(WalletAccountRepository(database: f.provider.database).find(provider: f.provider.entityID, id: instance.account))
    }

    /// Two accounts holding one recovery code, and a session the destination opened.
    private func pair(_ f: WalletProviderFixture) throws -> (source: NLDevice, destination: NLDevice, session: String) {
        let source = try NLDevice.register(f.provider), destination = try NLDevice.register(f.provider)
        let accounts = WalletAccountRepository(database: f.provider.database)
        for device in [source, destination] {
            XCTAssertTrue(try accounts.storeRecoveryCodeHMAC(provider: f.provider.entityID, id: account(f, device).id,
                                                            hmac: f.provider.recoveryCodeHMAC("code-1"), now: f.clock.now()))
        }
        let session = try f.provider.transfers.create(destination: account(f, destination).id, appVersion: XCTUnwrap(AppVersion("2.0.0")),
                                                      now: f.clock.now())
        return (source, destination, session.id)
    }

    private func payload() throws -> String {
        try JWE.encrypt(Array("{}".utf8), to: JWK(publicKey: PrivateKey(generatingFor: .ES256).publicKey, use: "enc"), encryption: .A256GCM)
    }

    func testAWholeTransferMovesTheKeysAndEndsTheSource() throws {
        let f = try WalletProviderFixture.make(configuration: remoteKeysConfiguration())
        let (source, destination, id) = try pair(f)
        let generated = try source.run(f.provider, "generate_keys", ["count": 3])
        let moved = try XCTUnwrap(generated.objectValue?["keys"]?.arrayValue?.first?.objectValue)
        let held = HeldKeyRepository(database: f.provider.database)
        let sourceID = try account(f, source).id, destinationID = try account(f, destination).id
        let session: JSONValue = .string(id)

        XCTAssertEqual(try source.run(f.provider, "confirm_transfer_session", ["transfer_session_id": session, "app_version": "1.0.0"])["state"],
                       "ready_for_transfer")
        XCTAssertEqual(try account(f, source).state, "transferring")
        XCTAssertEqual(try source.run(f.provider, "send_wallet_payload", ["transfer_session_id": session, "encrypted_payload": .string(payload())])["state"],
                       "ready_for_download")
        XCTAssertEqual(try destination.run(f.provider, "receive_payload", ["transfer_session_id": session])["state"], "ready")
        XCTAssertEqual(try destination.run(f.provider, "complete_transfer", ["transfer_session_id": session])["state"], "completed")

        XCTAssertEqual(try account(f, source).state, "transferred")
        XCTAssertEqual(try held.count(provider: f.provider.entityID, account: sourceID), 0)
        XCTAssertEqual(try held.count(provider: f.provider.entityID, account: destinationID), 3)
        // The moved keys work for the destination: it signs with one, and the source's own
        // public JWK verifies the signature.
        let payload = Array("header.payload".utf8)
        let signed = try destination.run(f.provider, "sign", ["key_id": XCTUnwrap(moved["key_id"]), "payload": .string(Base64URL.encode(payload))])
        let signature = try XCTUnwrap(signed.objectValue?["signature"]?.stringValue.flatMap(Base64URL.decode))
        XCTAssertTrue(try JWK(json: XCTUnwrap(moved["jwk"]?.objectValue)).publicKey().verify(signature: signature, data: payload, algorithm: .ES256))
        XCTAssertEqual(try source.run(f.provider, "check_transfer_status", ["transfer_session_id": session]), ["state": "completed"])
        let instance = try XCTUnwrap(WalletInstanceRepository(database: f.provider.database).find(provider: f.provider.entityID, id: source.tag))
        XCTAssertEqual(refusal { try f.provider.refuseTransferredAccount(of: instance) }?.codeValue, .invalidRequest)
        XCTAssertEqual(refusal { _ = try source.run(f.provider, "generate_keys") }?.codeValue, .invalidAccountState)
        let sessions = try f.provider.transferSessionsJSON(account: destinationID)
        XCTAssertEqual(sessions.first?.objectValue?["state"], "completed")
        XCTAssertEqual(sessions.first?.objectValue?["role"], "destination")
        XCTAssertNil(sessions.first?.objectValue?["payload"])
    }

    func testRefusedStepsChangeNothing() throws {
        let f = try WalletProviderFixture.make(configuration: remoteKeysConfiguration())
        let (source, destination, id) = try pair(f)
        let session: JSONValue = .string(id)
        // Bad params are the framework's invalid_instruction: not a JWE, no session id, a bad version.
        XCTAssertEqual(refusal { _ = try source.run(f.provider, "confirm_transfer_session", ["app_version": "1.0.0"]) }?.codeValue, .invalidInstruction)
        XCTAssertEqual(refusal { _ = try source.run(f.provider, "confirm_transfer_session", ["transfer_session_id": session, "app_version": "one"]) }?.codeValue,
                       .invalidInstruction)
        XCTAssertEqual(refusal { _ = try source.run(f.provider, "confirm_transfer_session", ["transfer_session_id": session, "app_version": "3.0.0"]) }?.codeValue,
                       .appVersionMismatch)
        XCTAssertEqual(try account(f, source).state, "active")
        _ = try source.run(f.provider, "confirm_transfer_session", ["transfer_session_id": session, "app_version": "1.0.0"])
        XCTAssertEqual(refusal { _ = try source.run(f.provider, "send_wallet_payload", ["transfer_session_id": session, "encrypted_payload": "a.b.c"]) }?.codeValue,
                       .invalidInstruction)
        XCTAssertEqual(refusal { _ = try destination.run(f.provider, "complete_transfer", ["transfer_session_id": session]) }?.codeValue,
                       .invalidTransferState)
        XCTAssertEqual(try destination.run(f.provider, "receive_payload", ["transfer_session_id": session]), ["state": "pending"])
        // Cancel by the destination: the source is active again and may sign as before.
        XCTAssertEqual(try destination.run(f.provider, "cancel_transfer", ["transfer_session_id": session])["state"], "cancelled")
        XCTAssertEqual(try account(f, source).state, "active")
        XCTAssertNotNil(try source.run(f.provider, "generate_keys")["keys"])
    }

    func testThePurgeTickExpiresSessions() throws {
        var configuration = remoteKeysConfiguration()
        configuration.transferLifetime = 60
        let f = try WalletProviderFixture.make(configuration: configuration)
        let (source, _, id) = try pair(f)
        _ = try source.run(f.provider, "confirm_transfer_session", ["transfer_session_id": .string(id), "app_version": "1.0.0"])
        f.clock.advance(61)
        _ = try f.provider.purgeExpired(now: f.clock.now())
        XCTAssertEqual(try account(f, source).state, "active")
        XCTAssertEqual(try TransferSessionRepository(database: f.provider.database).find(provider: f.provider.entityID, id: id)?.endedBy, "expiry")
    }
}
