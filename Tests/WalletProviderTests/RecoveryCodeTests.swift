import Cryptography
import Foundation
import JOSE
import JSON
import SDJWT
import Store
import Support
@testable import WalletProvider
import XCTest

/// `disclose_recovery_code` (issue 21, item 2): the PID's trust, what it discloses, its key
/// binding and status, and the first-store / must-match rule.
final class RecoveryCodeTests: XCTestCase {
    static let issuer = "https://pid.example.org"

    struct Setup {
        let f: WalletProviderFixture
        let issuerKey: PrivateKey
        var provider: WalletProvider { f.provider }
    }

    private func setup(denyList: [String] = []) throws -> Setup {
        let base = try WalletProviderFixture.make(configuration: remoteKeysConfiguration())
        let issuerKey = try PrivateKey(generatingFor: .ES256)
        let jwk = JWK(publicKey: issuerKey.publicKey).adding(["kid": "issuer-1"])
        var configuration = remoteKeysConfiguration()
        configuration.recoveryCodeDenyList = denyList
        let old = base.provider
        // The federation's answer for the issuer: its openid_credential_issuer jwks.
        let provider = WalletProvider(
            entityID: old.entityID, entityName: old.entityName, configuration: configuration, keys: old.keys, database: old.database,
            clock: base.clock, trustAnchors: [], adminToken: "admin-secret",
            pidIssuerMetadata: { issuer in
                guard issuer == Self.issuer else { throw WalletProviderError.refused("no trust chain from \(issuer)") }
                return ["openid_credential_issuer": ["jwks": ["keys": [jwk.jsonValue]]]]
            })
        return Setup(f: WalletProviderFixture(provider: provider, clock: base.clock, directory: base.directory), issuerKey: issuerKey)
    }

    /// A PID bound to `holder`, presented disclosing `disclose`.
    private func pid(_ s: Setup, holder: JWK, code: String = "c0de", disclose: Set<String> = ["recovery_code"], signer: PrivateKey? = nil,
                     status: (String, Int64)? = nil, keyBinding: (PrivateKey, String)? = nil) throws -> String {
        var claims: [String: JSONValue] = ["iss": .string(Self.issuer), "vct": "urn:eudi:pid:1", "cnf": ["jwk": holder.jsonValue],
                                           "recovery_code": .string(code), "given_name": "Erika", "iat": .int(s.f.clock.now()),
                                           "exp": .int(s.f.clock.now() + 86_400)]
        if let status { claims["status"] = ["status_list": ["uri": .string(status.0), "idx": .int(status.1)]] }
        let issued = try SDJWTIssuer(key: signer ?? s.issuerKey, algorithm: .ES256, keyID: "issuer-1")
            .issueCompact(claims: claims, plan: .disclosing(["recovery_code", "given_name"]))
        var presentation = try SDJWT.parse(issued).presentation(disclosing: disclose)
        if let (key, nonce) = keyBinding {
            presentation = try presentation.addingKeyBinding(key: key, algorithm: .ES256, audience: s.provider.entityID, nonce: nonce,
                                                             issuedAt: s.f.clock.now())
        }
        return presentation.serialized
    }

    private func heldKey(_ s: Setup, _ nl: NLDevice) throws -> JWK {
        let keys = try XCTUnwrap(nl.run(s.provider, "generate_keys").objectValue?["keys"]?.arrayValue)
        return try JWK(json: XCTUnwrap(keys[0].objectValue?["jwk"]?.objectValue))
    }

    private func disclose(_ s: Setup, _ nl: NLDevice, _ sdJWT: String, challenge: String? = nil) throws -> JSONValue {
        let challenge = try challenge ?? nl.challenge(s.provider)
        let jwt = try s.provider.performInstruction(named: "disclose_recovery_code", InstructionRequest.parse(
            nl.body(s.provider, challenge: challenge, params: ["sd_jwt": .string(sdJWT)])))
        return try JWS.parseClaims(jwt).claims["result"] ?? .null
    }

    private func account(_ s: Setup, _ nl: NLDevice) throws -> WalletAccountRecord {
        let instance = try XCTUnwrap(WalletInstanceRepository(database: s.provider.database).find(provider: s.provider.entityID, id: nl.tag))
        return try XCTUnwrap(WalletAccountRepository(database: s.provider.database).find(provider: s.provider.entityID, id: instance.account))
    }

    func testFirstDisclosureStoresLaterOnesMustMatch() throws {
        let s = try setup()
        let nl = try NLDevice.register(s.provider)
        let key = try heldKey(s, nl)
        XCTAssertEqual(try disclose(s, nl, pid(s, holder: key))["recovery_code"], "stored")
        let stored = try XCTUnwrap(account(s, nl).recoveryCodeHMAC)
        XCTAssertEqual(stored, s.provider.recoveryCodeHMAC("c0de"))
        XCTAssertFalse(stored.contains("c0de"))
        XCTAssertEqual(try disclose(s, nl, pid(s, holder: key))["recovery_code"], "matched")

        // Another code: 403 recovery_code_mismatch, nothing changed, the challenge unspent.
        let challenge = try nl.challenge(s.provider)
        let mismatch = refusal { _ = try self.disclose(s, nl, self.pid(s, holder: key, code: "other"), challenge: challenge) }
        XCTAssertEqual(mismatch?.codeValue, .recoveryCodeMismatch)
        XCTAssertEqual(mismatch?.statusCode, 403)
        XCTAssertEqual(try account(s, nl).recoveryCodeHMAC, stored)
        XCTAssertEqual(try account(s, nl).state, "active")
        XCTAssertEqual(try disclose(s, nl, pid(s, holder: key), challenge: challenge)["recovery_code"], "matched")
    }

    func testRefusedPIDs() throws {
        let s = try setup(denyList: ["denied"])
        let nl = try NLDevice.register(s.provider)
        let key = try heldKey(s, nl)
        func refused(_ sdJWT: String) -> WalletProviderError.Code? { refusal { _ = try self.disclose(s, nl, sdJWT) }?.codeValue }
        // More than recovery_code; nothing at all.
        XCTAssertEqual(refused(try pid(s, holder: key, disclose: ["recovery_code", "given_name"])), .invalidRequest)
        XCTAssertEqual(refused(try pid(s, holder: key, disclose: [])), .invalidRequest)
        // An untrusted issuer (another key under the trusted name).
        XCTAssertEqual(refused(try pid(s, holder: key, signer: PrivateKey(generatingFor: .ES256))), .invalidRequest)
        // Bound to a key the account does not hold, without key binding.
        let device = try PrivateKey(generatingFor: .ES256)
        XCTAssertEqual(refused(try pid(s, holder: JWK(publicKey: device.publicKey))), .invalidRequest)
        // Another account's held key.
        let other = try NLDevice.register(s.provider)
        XCTAssertEqual(refused(try pid(s, holder: heldKey(s, other))), .invalidRequest)
        // Deny list; unreadable.
        XCTAssertEqual(refused(try pid(s, holder: key, code: "denied")), .invalidRequest)
        XCTAssertEqual(refused("not-an-sd-jwt"), .invalidInstruction)
        // Expired.
        let expired = try pid(s, holder: key)
        s.f.clock.advance(86_400 + 120)
        let challenge = try nl.challenge(s.provider)
        XCTAssertEqual(refusal { _ = try self.disclose(s, nl, expired, challenge: challenge) }?.description.contains("expired"), true)
        // Status: unknown here, revoked; then valid.
        let uri = "https://pid.example.org/status/1"
        XCTAssertEqual(refused(try pid(s, holder: key, status: (uri, 7))), .invalidRequest)
        try s.provider.database.execute("INSERT INTO status_lists (id, uri, issuer, bits, size, created_at) VALUES (41, ?, ?, 2, 65536, 0)",
                                        [.text(uri), .text(Self.issuer)])
        try s.provider.database.execute(
            """
            INSERT INTO issued_credentials (id, issuer, persona, configuration_id, status_uri, status_list, status_index, status,
                key_thumbprint, issued_at, expires_at)
            VALUES ('c1', ?, 'p', 'pid', ?, 41, 7, 1, ?, 0, 9999999999)
            """, [.text(Self.issuer), .text(uri), .text(key.thumbprint())])
        XCTAssertEqual(refused(try pid(s, holder: key, status: (uri, 7))), .invalidRequest)
        try s.provider.database.execute("UPDATE issued_credentials SET status = 0 WHERE id = 'c1'")
        XCTAssertEqual(try disclose(s, nl, pid(s, holder: key, status: (uri, 7)))["recovery_code"], "stored")
        // Nothing refused above stored a code: the valid one was the first.
        XCTAssertEqual(try account(s, nl).recoveryCodeHMAC, s.provider.recoveryCodeHMAC("c0de"))
    }

    func testADeviceBoundPIDNeedsKeyBindingToTheChallenge() throws {
        let s = try setup()
        let nl = try NLDevice.register(s.provider)
        let device = try PrivateKey(generatingFor: .ES256)
        let holder = JWK(publicKey: device.publicKey)
        let challenge = try nl.challenge(s.provider)
        // Bound to another nonce: refused; to the instruction's challenge: accepted.
        XCTAssertEqual(refusal { _ = try self.disclose(s, nl, self.pid(s, holder: holder, keyBinding: (device, "other")), challenge: challenge) }?.codeValue,
                       .invalidRequest)
        XCTAssertEqual(try disclose(s, nl, pid(s, holder: holder, keyBinding: (device, challenge)), challenge: challenge)["recovery_code"],
                       "stored")
    }

    func testOutcomeNamesAnotherActiveAccountHoldingTheCode() throws {
        let s = try setup()
        let old = try NLDevice.register(s.provider)
        _ = try disclose(s, old, pid(s, holder: heldKey(s, old)))
        let new = try NLDevice.register(s.provider)
        let newAccount = try account(s, new)
        let outcome = try s.provider.database.transaction { database throws -> RecoveryCodeOutcome in
            let instance = try XCTUnwrap(WalletInstanceRepository(database: database).find(provider: s.provider.entityID, id: new.tag))
            let context = InstructionContext(provider: s.provider, database: database, account: newAccount, instance: instance,
                                             challenge: "c", now: s.f.clock.now())
            return try context.recordRecoveryCode(hmac: s.provider.recoveryCodeHMAC("c0de"))
        }
        XCTAssertEqual(outcome, .heldByOtherAccount(try account(s, old).id))
        // Over HTTP-less instruction: the default answer is "stored", and both hold the code.
        let third = try NLDevice.register(s.provider)
        XCTAssertEqual(try disclose(s, third, pid(s, holder: heldKey(s, third)))["recovery_code"], "stored")
        XCTAssertEqual(try account(s, third).recoveryCodeHMAC, try account(s, old).recoveryCodeHMAC)
    }

    /// While a PIN recovery is pending, the pending PIN key signs the disclosure (the framework's
    /// `.key` signer): the old PIN is refused without counting as a wrong PIN.
    func testThePendingPINKeySignsWhileRecoveringPIN() throws {
        let s = try setup()
        let nl = try NLDevice.register(s.provider)
        let key = try heldKey(s, nl)
        _ = try disclose(s, nl, pid(s, holder: key))
        let newPIN = try PrivateKey(generatingFor: .ES256)
        let accounts = WalletAccountRepository(database: s.provider.database)
        let id = try account(s, nl).id
        try accounts.setPendingPINPublicKey(provider: s.provider.entityID, id: id,
                                            jwk: JWK(publicKey: newPIN.publicKey).keyMembersOnly.jsonValue.serialized(), now: s.f.clock.now())
        XCTAssertTrue(try accounts.transition(provider: s.provider.entityID, id: id, from: ["active"], to: "recovering_pin",
                                              rememberPrevious: true, now: s.f.clock.now()))
        // The PID must be on one of the recovery's keys for the recovery to finish (PINRecovery, i-nlrec).
        try HeldKeyRepository(database: s.provider.database).setPurpose(PINRecovery.keyPurpose, provider: s.provider.entityID,
                                                                        account: id, from: HeldKeyRecord.walletPurpose)
        let params: [String: JSONValue] = ["sd_jwt": .string(try pid(s, holder: key))]
        let old = refusal { _ = try s.provider.performInstruction(named: "disclose_recovery_code", InstructionRequest.parse(
            nl.body(s.provider, challenge: nl.challenge(s.provider), params: params))) }
        XCTAssertEqual(old?.codeValue, .invalidRequest)
        XCTAssertEqual(try account(s, nl).pinFailures, 0)
        XCTAssertEqual(refusal { _ = try nl.run(s.provider, "generate_keys") }?.codeValue, .invalidAccountState)
        let jwt = try s.provider.performInstruction(named: "disclose_recovery_code", InstructionRequest.parse(
            nl.body(s.provider, challenge: nl.challenge(s.provider), params: params, signer: newPIN)))
        XCTAssertEqual(try JWS.parseClaims(jwt).claims["result"]?["recovery_code"], "matched")
        // The matching disclosure finished the recovery: the pending key is the PIN key now.
        XCTAssertEqual(try account(s, nl).state, "active")
        XCTAssertNil(try account(s, nl).previousState)
    }
}
