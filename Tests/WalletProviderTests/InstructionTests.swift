import Cryptography
import Foundation
import JOSE
import JSON
import Store
import Support
@testable import WalletProvider
import XCTest

/// An NL device: the hardware key of a registered instance and the PIN key of its account.
struct NLDevice {
    let device: TestDevice
    var pinKey: PrivateKey
    var tag: String { device.tag }

    static func register(_ provider: WalletProvider) throws -> NLDevice {
        let device = try TestDevice()
        let pinKey = try PrivateKey(generatingFor: .ES256)
        var request = try device.registration(provider, nonce: provider.issueNonce())
        request.pinPublicKey = JWK(publicKey: pinKey.publicKey).keyMembersOnly
        try provider.register(request)
        return NLDevice(device: device, pinKey: pinKey)
    }

    /// The body of `POST <wp>/instructions/<name>`.
    func body(_ provider: WalletProvider, challenge: String, params: [String: JSONValue] = [:], signer: PrivateKey? = nil,
              hardwareKey: PrivateKey? = nil, audience: String? = nil, issuedAt: Int64? = nil) throws -> JSONValue {
        let claims: [String: JSONValue] = ["iss": .string(tag), "aud": .string(audience ?? provider.entityID), "challenge": .string(challenge),
                                           "iat": .int(issuedAt ?? provider.clock.now()), "params": .object(params)]
        let instruction = try JWS.sign(header: ["typ": "wp-instruction+jwt"], payloadBytes: JSONValue.object(claims).bytes,
                                       key: signer ?? pinKey, algorithm: .ES256)
        let signature = try (hardwareKey ?? device.key).sign(Array(instruction.utf8), algorithm: .ES256)
        return ["instruction": .string(instruction), "hardware_signature": .string(Base64URL.encode(signature))]
    }

    func challenge(_ provider: WalletProvider) throws -> String {
        try provider.issueInstructionChallenge(InstructionChallengeRequest.parse(["instance": .string(tag)]))
    }

    /// Challenge → instruction → the decoded `result`.
    func run(_ provider: WalletProvider, _ name: String, _ params: [String: JSONValue] = [:], signer: PrivateKey? = nil) throws -> JSONValue {
        let jwt = try provider.performInstruction(named: name, InstructionRequest.parse(body(provider, challenge: challenge(provider),
                                                                                              params: params, signer: signer)))
        let (jws, claims) = try JWS.parseClaims(jwt)
        XCTAssertEqual(jws.type, WalletProvider.instructionResultType)
        try jws.verify(keys: JWKSet(keys: [provider.keys.signingJWK]), allowList: [.ES256], expectedType: WalletProvider.instructionResultType)
        XCTAssertEqual(claims["aud"]?.stringValue, tag)
        XCTAssertEqual(claims["instruction"]?.stringValue, name)
        return claims["result"] ?? .null
    }
}

func remoteKeysConfiguration() -> WalletProviderConfiguration {
    var configuration = WalletProviderConfiguration()
    configuration.remoteKeys = true
    return configuration
}

func refusal(_ body: () throws -> Void) -> WalletProviderError? {
    do { try body(); return nil } catch let error as WalletProviderError { return error } catch {
        XCTFail("unexpected \(error)"); return nil
    }
}

final class InstructionTests: XCTestCase {
    func testRegistrationStoresThePINKeyOnlyWithRemoteKeys() throws {
        let f = try WalletProviderFixture.make(configuration: remoteKeysConfiguration())
        let nl = try NLDevice.register(f.provider)
        let instance = try XCTUnwrap(WalletInstanceRepository(database: f.provider.database).find(provider: f.provider.entityID, id: nl.tag))
        let account = try XCTUnwrap(WalletAccountRepository(database: f.provider.database).find(provider: f.provider.entityID, id: instance.account))
        XCTAssertEqual(account.state, "active")
        XCTAssertEqual(account.pinFailures, 0)
        XCTAssertEqual(try JWK(json: XCTUnwrap(JSONValue.parse(Array(XCTUnwrap(account.pinPublicKey).utf8)).objectValue)).thumbprint(),
                       JWK(publicKey: nl.pinKey.publicKey).thumbprint())

        let plain = try WalletProviderFixture.make()
        XCTAssertEqual(refusal { _ = try NLDevice.register(plain.provider) }?.codeValue, .badRequest)
        // A private JWK is refused at parse time.
        var privateJWK = JWK(publicKey: nl.pinKey.publicKey).keyMembersOnly.json
        privateJWK["d"] = "AAAA"
        XCTAssertEqual(refusal { _ = try RegistrationRequest.parsePINKey(.object(privateJWK)) }?.codeValue, .badRequest)
        XCTAssertEqual(refusal { _ = try RegistrationRequest.parsePINKey(["kty": "OKP", "crv": "Ed25519", "x": "AAAA"]) }?.codeValue, .badRequest)
        // The instructions answer 404 when remote keys are off.
        XCTAssertEqual(refusal { _ = try plain.provider.issueInstructionChallenge(InstructionChallengeRequest(instance: "x")) }?.codeValue, .notFound)
    }

    func testGenerateKeysAndSign() throws {
        let f = try WalletProviderFixture.make(configuration: remoteKeysConfiguration())
        let nl = try NLDevice.register(f.provider)
        let generated = try nl.run(f.provider, "generate_keys", ["count": 3])
        let keys = try XCTUnwrap(generated.objectValue?["keys"]?.arrayValue)
        XCTAssertEqual(keys.count, 3)
        let keyID = try XCTUnwrap(keys[0].objectValue?["key_id"]?.stringValue)
        let jwk = try JWK(json: XCTUnwrap(keys[0].objectValue?["jwk"]?.objectValue))
        XCTAssertNil(jwk.json["d"])

        let payload = Array("header.payload".utf8)
        let signed = try nl.run(f.provider, "sign", ["key_id": .string(keyID), "payload": .string(Base64URL.encode(payload))])
        let signature = try XCTUnwrap(signed.objectValue?["signature"]?.stringValue.flatMap(Base64URL.decode))
        XCTAssertEqual(signature.count, 64)
        XCTAssertTrue(try jwk.publicKey().verify(signature: signature, data: payload, algorithm: .ES256))

        // Stored wrapped: the row holds neither the PEM nor the scalar, and opens only in its row.
        let record = try XCTUnwrap(HeldKeyRepository(database: f.provider.database).list(provider: f.provider.entityID,
                                                                                          account: accountID(f, nl)).first)
        XCTAssertFalse(String(decoding: record.wrappedKey, as: UTF8.self).contains("PRIVATE KEY"))
        var moved = record
        moved.account = "another"
        XCTAssertEqual(refusal { _ = try f.provider.heldKeys.unwrap(moved) }?.codeValue, .serverError,
                       "the row's key was opened (and kept) for the sign above; a moved row still does not open")
        XCTAssertTrue(try f.provider.heldKeys.unwrap(record).privateKey === f.provider.heldKeys.unwrap(record).privateKey,
                      "a row's key is opened once and kept")

        // Another account's key id, bad params, an unknown name: 400 invalid_instruction.
        let other = try NLDevice.register(f.provider)
        for (name, params) in [("sign", ["key_id": JSONValue.string(keyID), "payload": "AAAA"]), ("sign", ["key_id": .string(keyID)]),
                               ("generate_keys", ["count": 11]), ("generate_keys", ["count": "two"]), ("no_such", [:])] {
            let error = refusal { _ = try other.run(f.provider, name, params) }
            XCTAssertEqual(error?.codeValue, .invalidInstruction, "\(name) \(params)")
        }
    }

    func testWrongPINsBlockTheAccountAndARightOneResetsTheCount() throws {
        var configuration = remoteKeysConfiguration()
        configuration.pinAttempts = 4
        let f = try WalletProviderFixture.make(configuration: configuration)
        let nl = try NLDevice.register(f.provider)
        let wrong = try PrivateKey(generatingFor: .ES256)
        for left in [3, 2] {
            let error = refusal { _ = try nl.run(f.provider, "generate_keys", signer: wrong) }
            XCTAssertEqual(error?.codeValue, .invalidPIN)
            XCTAssertEqual(error?.statusCode, 403)
            XCTAssertEqual(error?.extra["attempts_left"], .int(Int64(left)))
        }
        _ = try nl.run(f.provider, "generate_keys")
        XCTAssertEqual(try account(f, nl).pinFailures, 0)
        for left in [3, 2, 1] {
            XCTAssertEqual(refusal { _ = try nl.run(f.provider, "generate_keys", signer: wrong) }?.extra["attempts_left"], .int(Int64(left)))
        }
        let blocked = refusal { _ = try nl.run(f.provider, "generate_keys", signer: wrong) }
        XCTAssertEqual(blocked?.codeValue, .accountBlocked)
        XCTAssertEqual(blocked?.extra["pin_failures"], .int(4))
        XCTAssertEqual(try account(f, nl).state, "blocked")
        // Now even the right PIN is refused: only PIN recovery is accepted.
        XCTAssertEqual(refusal { _ = try nl.run(f.provider, "generate_keys") }?.codeValue, .accountBlocked)
    }

    func testChallengesAreSingleUseOwnAndUnburntByRefusals() throws {
        let f = try WalletProviderFixture.make(configuration: remoteKeysConfiguration())
        let nl = try NLDevice.register(f.provider)
        let other = try NLDevice.register(f.provider)
        func perform(_ body: JSONValue) throws { _ = try f.provider.performInstruction(named: "generate_keys", InstructionRequest.parse(body)) }

        let challenge = try nl.challenge(f.provider)
        // A bad hardware signature, a wrong aud, an old iat: refused, challenge kept.
        let stranger = try PrivateKey(generatingFor: .ES256)
        XCTAssertEqual(refusal { try perform(nl.body(f.provider, challenge: challenge, hardwareKey: stranger)) }?.codeValue, .invalidRequest)
        XCTAssertEqual(refusal { try perform(nl.body(f.provider, challenge: challenge, audience: "https://elsewhere")) }?.codeValue, .invalidRequest)
        XCTAssertEqual(refusal { try perform(nl.body(f.provider, challenge: challenge, issuedAt: f.clock.now() - 7_200)) }?.codeValue,
                       .invalidRequest)
        // Params of the wrong shape: refused before anything is spent.
        XCTAssertEqual(refusal { try perform(nl.body(f.provider, challenge: challenge, params: ["count": 0])) }?.codeValue, .invalidInstruction)
        // Another instance's challenge.
        XCTAssertEqual(refusal { try perform(other.body(f.provider, challenge: challenge)) }?.codeValue, .invalidRequest)
        try perform(nl.body(f.provider, challenge: challenge))
        let reused = refusal { try perform(nl.body(f.provider, challenge: challenge)) }
        XCTAssertEqual(reused?.codeValue, .invalidRequest)
        // Expired.
        let late = try nl.challenge(f.provider)
        f.clock.advance(61)
        XCTAssertEqual(refusal { try perform(nl.body(f.provider, challenge: late)) }?.codeValue, .invalidRequest)
        // A malformed body.
        XCTAssertEqual(refusal { _ = try InstructionRequest.parse(["instruction": "x"]) }?.codeValue, .badRequest)
        XCTAssertEqual(refusal { _ = try InstructionRequest.parse(["instruction": "a.b.c", "hardware_signature": "AA"]) }?.codeValue, .badRequest)
    }

    func testFiftyConcurrentUsesOfOneChallengeHaveOneWinner() throws {
        let path = NSTemporaryDirectory() + "wp-instructions-\(UUID().uuidString).sqlite"
        let f = try WalletProviderFixture.make(configuration: remoteKeysConfiguration(), databasePath: path)
        let nl = try NLDevice.register(f.provider)
        let body = try nl.body(f.provider, challenge: nl.challenge(f.provider), params: ["count": 1])
        let wins = Locked(0)
        let refusals = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 50) { _ in
            do {
                _ = try f.provider.performInstruction(named: "generate_keys", InstructionRequest.parse(body))
                wins.withLock { $0 += 1 }
            } catch {
                refusals.withLock { $0 += 1 }
            }
        }
        XCTAssertEqual(wins.withLock { $0 }, 1)
        XCTAssertEqual(refusals.withLock { $0 }, 49)
        XCTAssertEqual(try HeldKeyRepository(database: f.provider.database).count(provider: f.provider.entityID, account: accountID(f, nl)), 1)
    }

    func testKeyAttestationAndProofsForHeldKeys() throws {
        let f = try WalletProviderFixture.make(configuration: remoteKeysConfiguration())
        let nl = try NLDevice.register(f.provider)
        let keys = try XCTUnwrap(nl.run(f.provider, "generate_keys", ["count": 2]).objectValue?["keys"]?.arrayValue)
        let ids = keys.compactMap { $0.objectValue?["key_id"] }
        let attested = try nl.run(f.provider, "issue_key_attestation", ["key_ids": .array(ids), "nonce": "c-nonce-1"])
        let compact = try XCTUnwrap(attested.objectValue?["key_attestation"]?.stringValue)
        let (jws, claims) = try JWS.parseClaims(compact)
        XCTAssertEqual(jws.type, "key-attestation+jwt")
        XCTAssertEqual(claims["nonce"]?.stringValue, "c-nonce-1")
        XCTAssertEqual(claims["attested_keys"]?.arrayValue?.count, 2)
        XCTAssertEqual(claims["attested_keys"]?.arrayValue?.first, keys[0].objectValue?["jwk"])

        let made = try nl.run(f.provider, "create_proofs", ["aud": "https://issuer.example", "nonce": "c-nonce-2", "count": 2,
                                                             "unknown_param": true])
        let proofs = try XCTUnwrap(made.objectValue?["proofs"]?.arrayValue?.compactMap(\.stringValue))
        let newKeys = try XCTUnwrap(made.objectValue?["keys"]?.arrayValue)
        XCTAssertEqual(proofs.count, 2)
        for (index, proof) in proofs.enumerated() {
            let (proofJWS, proofClaims) = try JWS.parseClaims(proof)
            XCTAssertEqual(proofJWS.type, "openid4vci-proof+jwt")
            XCTAssertEqual(proofJWS.keyID, String(index))
            XCTAssertEqual(proofClaims["aud"]?.stringValue, "https://issuer.example")
            XCTAssertEqual(proofClaims["nonce"]?.stringValue, "c-nonce-2")
            let attestation = try XCTUnwrap(proofJWS.header["key_attestation"]?.stringValue)
            let attestedKeys = try XCTUnwrap(JWS.parseClaims(attestation).claims["attested_keys"]?.arrayValue)
            let key = try JWK(json: XCTUnwrap(attestedKeys[index].objectValue))
            XCTAssertEqual(attestedKeys[index], newKeys[index].objectValue?["jwk"])
            try proofJWS.verify(keys: JWKSet(keys: [key.adding(["kid": .string(String(index))])]), allowList: [.ES256],
                                expectedType: "openid4vci-proof+jwt")
        }
        // Proofs by held keys named by id; an unknown one is refused.
        _ = try nl.run(f.provider, "create_proofs", ["aud": "https://issuer.example", "key_ids": .array(ids)])
        XCTAssertEqual(refusal { _ = try nl.run(f.provider, "create_proofs", ["aud": "https://i", "key_ids": ["nope"]]) }?.codeValue,
                       .invalidInstruction)
        XCTAssertEqual(refusal { _ = try nl.run(f.provider, "create_proofs", ["nonce": "n"]) }?.codeValue, .invalidInstruction)
    }

    private func accountID(_ f: WalletProviderFixture, _ nl: NLDevice) throws -> String {
        try XCTUnwrap(WalletInstanceRepository(database: f.provider.database).find(provider: f.provider.entityID, id: nl.tag)).account
    }

    private func account(_ f: WalletProviderFixture, _ nl: NLDevice) throws -> WalletAccountRecord {
        try XCTUnwrap(WalletAccountRepository(database: f.provider.database).find(provider: f.provider.entityID, id: accountID(f, nl)))
    }
}
