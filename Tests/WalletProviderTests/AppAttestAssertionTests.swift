import CBOR
import Cryptography
import Store
import Support
@testable import WalletProvider
import XCTest

/// App Attest assertions as an iOS instance's hardware signature (Apple, "Verify the
/// assertion"): the CBOR shape, the signature over SHA-256(authenticatorData ‖ clientDataHash),
/// the rpIdHash, and the stored counter that must rise.
final class AppAttestAssertionTests: XCTestCase {
    private let appID = "ABCDE12345.eu.trustbed.wallet"
    private let clientData = Array(#"{"challenge":"n-1","jwk_thumbprint":"t-1"}"#.utf8)

    private func assertion(key: PrivateKey, counter: UInt32, appID: String? = nil) throws -> String {
        let auth = Digest.sha256(Array((appID ?? self.appID).utf8)) + [0x01] + withUnsafeBytes(of: counter.bigEndian, Array.init)
        let nonce = Digest.sha256(auth + Digest.sha256(clientData))
        let raw = try key.sign(nonce, algorithm: .ES256)
        let der = try XCTUnwrap(WalletAttestationTests.Registered.der(fromRaw: raw))
        return Base64URL.encode(CBORValue.map([CBORMapEntry(.text("signature"), .bytes(der)),
                                               CBORMapEntry(.text("authenticatorData"), .bytes(auth))]).encoded())
    }

    func testDecodesAndVerifies() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        let decoded = try XCTUnwrap(AppAttestAssertion.decode(try assertion(key: key, counter: 258)))
        XCTAssertEqual(decoded.counter, 258)
        XCTAssertNoThrow(try decoded.verify(clientData: clientData, key: key.publicKey, appIDs: ["OTHER12345.x", appID]))
        XCTAssertThrowsError(try decoded.verify(clientData: clientData + [0x20], key: key.publicKey, appIDs: [appID]))
        XCTAssertThrowsError(try decoded.verify(clientData: clientData, key: try PrivateKey(generatingFor: .ES256).publicKey, appIDs: [appID]))
        let otherApp = try XCTUnwrap(AppAttestAssertion.decode(try assertion(key: key, counter: 1, appID: "OTHER12345.x")))
        XCTAssertThrowsError(try otherApp.verify(clientData: clientData, key: key.publicKey, appIDs: [appID]))
    }

    func testPlainSignaturesAndGarbageAreNotAssertions() throws {
        let key = try PrivateKey(generatingFor: .ES256)
        XCTAssertNil(AppAttestAssertion.decode(Base64URL.encode(try key.sign(clientData, algorithm: .ES256))))
        XCTAssertNil(AppAttestAssertion.decode("not base64url!"))
        XCTAssertNil(AppAttestAssertion.decode(Base64URL.encode(CBORValue.map([
            CBORMapEntry(.text("signature"), .bytes([1])), CBORMapEntry(.text("authenticatorData"), .bytes([0, 1]))]).encoded())),
                     "authenticatorData too short")
    }

    func testTheStoredCounterOnlyRises() throws {
        let database = try Database(path: ":memory:")
        let repository = WalletInstanceRepository(database: database)
        XCTAssertTrue(try repository.insertWithNewAccount(WalletInstanceRecord(
            provider: "p", id: "tag", account: "a", hardwareJWK: "{}", hardwareJWKThumbprint: "t", format: "apple",
            deviceFacts: "{}", state: "operational", createdAt: 1, updatedAt: 1)))
        XCTAssertEqual(try repository.assertionCounter(provider: "p", id: "tag"), 0)
        XCTAssertTrue(try repository.raiseAssertionCounter(provider: "p", id: "tag", to: 3))
        XCTAssertFalse(try repository.raiseAssertionCounter(provider: "p", id: "tag", to: 3))
        XCTAssertFalse(try repository.raiseAssertionCounter(provider: "p", id: "tag", to: 2))
        XCTAssertTrue(try repository.raiseAssertionCounter(provider: "p", id: "tag", to: 4))
        XCTAssertEqual(try repository.assertionCounter(provider: "p", id: "tag"), 4)
    }
}
