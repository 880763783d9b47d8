import Cryptography
import Foundation
import JOSE
import XCTest
@testable import WalletProvider

/// App Attest attestation objects made by Tests/Fixtures/device-attestation/make_fixtures.py
/// (Python cryptography and cbor2) in Apple's documented shape, under a test root.
final class DeviceAttestationAppleTests: XCTestCase {
    private var fixture: DeviceAttestationFixture!
    private var verifier: AppleAppAttest!
    private var hardwareKey: JWK!
    private var clientDataHash: [UInt8] = []
    private var keyID = ""

    override func setUpWithError() throws {
        fixture = try DeviceAttestationFixture.load("apple-app-attest.json")
        verifier = AppleAppAttest(roots: [try Certificate(pem: fixture.root_pem)], appIDs: ["OTHER.app", fixture.app_id!])
        hardwareKey = try DeviceAttestationFixture.jwk(fixture.hardware_jwk)
        clientDataHash = DeviceAttestationFixture.bytes(hex: fixture.client_data_hash_hex!)
        keyID = fixture.key_id!
    }

    private func verify(
        _ name: String, verifier: AppleAppAttest? = nil, keyID: String? = nil, hardwareKey: JWK? = nil
    ) throws -> AttestedDeviceKey {
        let attestation = try XCTUnwrap(fixture.apple?[name], "fixture case \(name)")
        let hash = clientDataHash
        return try (verifier ?? self.verifier).verify(
            attestation: attestation, hardwareKeyTag: keyID ?? self.keyID, clientDataHashes: { _ in [hash] },
            hardwareKey: hardwareKey, at: fixture.check_time
        )
    }

    private func assertRefused(
        _ name: String, containing text: String, verifier: AppleAppAttest? = nil, keyID: String? = nil,
        hardwareKey: JWK? = nil, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try verify(name, verifier: verifier, keyID: keyID, hardwareKey: hardwareKey), file: file, line: line) { error in
            guard let error = error as? DeviceAttestationError else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(error.kind, .invalidAttestation, file: file, line: line)
            XCTAssertEqual(error.errorCode, "invalid_request", file: file, line: line)
            XCTAssertTrue(error.reason.contains(text), "\(error.reason) lacks \(text)", file: file, line: line)
        }
    }

    func testProductionAttestation() throws {
        let attested = try verify("good", hardwareKey: hardwareKey)
        XCTAssertEqual(attested.facts, DeviceFacts(model: nil, os: nil, securityLevel: .secureEnclave, integrity: true))
        XCTAssertEqual(attested.facts.securityLevel.keyStorage, "iso_18045_high")
        XCTAssertEqual(attested.publicKey.thumbprint(), hardwareKey.thumbprint())
    }

    func testDevelopmentAttestation() throws {
        XCTAssertEqual(try verify("good_development").facts.securityLevel, .secureEnclave)
    }

    func testKeyIDInURLSafeBase64() throws {
        let urlSafe = keyID.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        XCTAssertNoThrow(try verify("good", keyID: urlSafe))
    }

    func testWrongNonce() {
        assertRefused("wrong_nonce", containing: "nonce")
        let attestation = fixture.apple!["good"]!
        XCTAssertThrowsError(try verifier.verify(
            attestation: attestation, hardwareKeyTag: keyID, clientDataHashes: { _ in [Array(repeating: 0, count: 32)] },
            at: fixture.check_time
        ))
    }

    func testWrongRPID() {
        assertRefused("wrong_rp_id", containing: "rpIdHash")
        let narrow = AppleAppAttest(roots: verifier.roots, appIDs: ["TEAMID1234.eu.trustbed.other"])
        assertRefused("good", containing: "rpIdHash", verifier: narrow)
    }

    func testCounterNotZero() {
        assertRefused("counter_not_zero", containing: "counter")
    }

    func testWrongAAGUID() {
        assertRefused("wrong_aaguid", containing: "aaguid")
    }

    func testWrongKeyID() {
        assertRefused("good", containing: "key id", keyID: Base64URLTestHelper.standard(Array(repeating: 7, count: 32)))
        assertRefused("good", containing: "32-byte", keyID: "c2hvcnQ=")
        assertRefused("wrong_credential_id", containing: "credentialId")
    }

    func testWrongKey() throws {
        let android = try DeviceAttestationFixture.load("android-key-attestation.json")
        assertRefused("good", containing: "not the hardware key", hardwareKey: try DeviceAttestationFixture.jwk(android.hardware_jwk))
    }

    func testWrongRoot() throws {
        assertRefused("wrong_root", containing: "does not validate")
        let other = AppleAppAttest(roots: [try Certificate(pem: fixture.other_root_pem)], appIDs: [fixture.app_id!])
        assertRefused("good", containing: "does not validate", verifier: other)
        let apple = AppleAppAttest(roots: AttestationRoots.appleAppAttestation(), appIDs: [fixture.app_id!])
        assertRefused("good", containing: "does not validate", verifier: apple)
    }

    func testExpiredCredentialCertificate() throws {
        let attestation = fixture.apple!["good"]!
        let hash = clientDataHash
        // The credCert is valid 2026-05-30 to 2026-06-02, like Apple's three-day certificates.
        XCTAssertThrowsError(try verifier.verify(
            attestation: attestation, hardwareKeyTag: keyID, clientDataHashes: { _ in [hash] }, at: fixture.check_time + 86_400 * 3
        )) { XCTAssertTrue(String(describing: $0).contains("does not validate")) }
    }

    func testChainTooLong() {
        assertRefused("chain_too_long", containing: "at most 3")
    }

    func testMalformedInput() {
        assertRefused("malformed_cbor", containing: "not CBOR")
        assertRefused("malformed_der", containing: "not DER X.509")
        assertRefused("not_base64url", containing: "not base64url")
        assertRefused("wrong_fmt", containing: "fmt")
    }

    func testAuthenticatorDataBounds() {
        XCTAssertThrowsError(try AuthenticatorData(Array(repeating: 0, count: 54)))
        var short = [UInt8](repeating: 0, count: 55)
        short[54] = 32 // a 32-byte credentialId announced, none present
        XCTAssertThrowsError(try AuthenticatorData(short))
    }
}

enum Base64URLTestHelper {
    static func standard(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
}

/// A real attestation object from an iOS 14 device (veehaitch/devicecheck-appattest's test
/// resources) against the Apple root shipped in Entities/roots/.
final class DeviceAttestationAppleRealObjectTests: XCTestCase {
    private struct RealObject: Decodable {
        let source: String
        let attestation: String
        let client_data_hash_hex: String
        let key_id: String
        let app_id: String
        let check_time: Int64
    }

    func testRealAttestationVerifiesUnderTheShippedAppleRoot() throws {
        let url = DeviceAttestationFixture.directory.appendingPathComponent("veehaitch-devicecheck-appattest-ios14.json")
        let real = try JSONDecoder().decode(RealObject.self, from: Data(contentsOf: url))
        let hash = DeviceAttestationFixture.bytes(hex: real.client_data_hash_hex)
        let verifier = AppleAppAttest(roots: AttestationRoots.appleAppAttestation(), appIDs: [real.app_id])
        let attested = try verifier.verify(
            attestation: real.attestation, hardwareKeyTag: real.key_id, clientDataHashes: { _ in [hash] }, at: real.check_time
        )
        XCTAssertEqual(attested.facts.securityLevel, .secureEnclave)
        XCTAssertThrowsError(try verifier.verify(
            attestation: real.attestation, hardwareKeyTag: real.key_id, clientDataHashes: { _ in [Array(hash.reversed())] },
            at: real.check_time
        ))
        // The credCert lived three days (2020-10-21 to 2020-10-24).
        XCTAssertThrowsError(try verifier.verify(
            attestation: real.attestation, hardwareKeyTag: real.key_id, clientDataHashes: { _ in [hash] },
            at: real.check_time + 86_400 * 3
        ))
    }
}
