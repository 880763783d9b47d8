import CBOR
import Cryptography
import Foundation
import JOSE
import JSON
import Store
import Support
@testable import WalletProvider
import XCTest

/// An iOS (App Attest) instance may sign instructions with an App Attest assertion over the
/// instruction's bytes, whose counter must rise (issue 21; docs/wallet-provider.md, "Instructions").
final class InstructionAppAttestTests: XCTestCase {
    private let appID = "ABCDE12345.eu.trustbed.wallet"

    private func assertion(key: PrivateKey, counter: UInt32, clientData: [UInt8]) throws -> String {
        let auth = Digest.sha256(Array(appID.utf8)) + [0x01] + withUnsafeBytes(of: counter.bigEndian, Array.init)
        let raw = try key.sign(Digest.sha256(auth + Digest.sha256(clientData)), algorithm: .ES256)
        let der = try XCTUnwrap(WalletAttestationTests.Registered.der(fromRaw: raw))
        return Base64URL.encode(CBORValue.map([CBORMapEntry(.text("signature"), .bytes(der)),
                                               CBORMapEntry(.text("authenticatorData"), .bytes(auth))]).encoded())
    }

    func testAssertionsSignInstructionsWithARisingCounter() throws {
        var configuration = remoteKeysConfiguration()
        configuration.appleAppIDs = [appID]
        let f = try WalletProviderFixture.make(configuration: configuration)
        let hardware = try PrivateKey(generatingFor: .ES256)
        let pin = try PrivateKey(generatingFor: .ES256)
        let hardwareJWK = JWK(publicKey: hardware.publicKey).keyMembersOnly
        // An App Attest instance as registration leaves it (its attestation is tested elsewhere).
        XCTAssertTrue(try WalletInstanceRepository(database: f.provider.database).insertWithNewAccount(
            WalletInstanceRecord(provider: f.provider.entityID, id: "apple-key-id", account: "acct", hardwareJWK: hardwareJWK.jsonValue.serialized(),
                                 hardwareJWKThumbprint: hardwareJWK.thumbprint(), format: "apple", deviceFacts: "{}", state: "installed",
                                 createdAt: 1, updatedAt: 1),
            pinPublicKey: JWK(publicKey: pin.publicKey).keyMembersOnly.jsonValue.serialized()))

        func send(counter: UInt32) throws {
            let challenge = try f.provider.issueInstructionChallenge(InstructionChallengeRequest(instance: "apple-key-id"))
            let claims: [String: JSONValue] = ["iss": "apple-key-id", "aud": .string(f.provider.entityID), "challenge": .string(challenge),
                                               "iat": .int(f.clock.now()), "params": [:]]
            let instruction = try JWS.sign(header: ["typ": "wp-instruction+jwt"], payloadBytes: JSONValue.object(claims).bytes, key: pin,
                                           algorithm: .ES256)
            let body: JSONValue = ["instruction": .string(instruction),
                                   "hardware_signature": .string(try assertion(key: hardware, counter: counter, clientData: Array(instruction.utf8)))]
            _ = try f.provider.performInstruction(named: "generate_keys", InstructionRequest.parse(body))
        }
        try send(counter: 1)
        XCTAssertEqual(refusal { try send(counter: 1) }?.codeValue, .invalidRequest)
        try send(counter: 5)
        XCTAssertEqual(try WalletInstanceRepository(database: f.provider.database).assertionCounter(provider: f.provider.entityID, id: "apple-key-id"), 5)
        XCTAssertEqual(try HeldKeyRepository(database: f.provider.database).count(provider: f.provider.entityID, account: "acct"), 2)
    }
}
