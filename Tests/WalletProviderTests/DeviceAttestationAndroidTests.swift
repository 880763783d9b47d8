import Cryptography
import Foundation
import JOSE
import XCTest
@testable import WalletProvider

/// Android Key Attestation chains made by Tests/Fixtures/device-attestation/make_fixtures.py
/// in the shape a Keystore returns them, under a test root.
final class DeviceAttestationAndroidTests: XCTestCase {
    private var fixture: DeviceAttestationFixture!
    private var verifier: AndroidKeyAttestation!
    private var hardwareKey: JWK!
    private var challenge: [UInt8] = []

    override func setUpWithError() throws {
        fixture = try DeviceAttestationFixture.load("android-key-attestation.json")
        verifier = AndroidKeyAttestation(roots: [try Certificate(pem: fixture.root_pem)])
        hardwareKey = try DeviceAttestationFixture.jwk(fixture.hardware_jwk)
        challenge = DeviceAttestationFixture.bytes(hex: fixture.challenge_hex!)
    }

    private func verify(
        _ name: String, verifier: AndroidKeyAttestation? = nil, hardwareKey: JWK? = nil, challenges: [[UInt8]]? = nil
    ) throws -> AttestedDeviceKey {
        let chain = try XCTUnwrap(fixture.android?[name], "fixture case \(name)")
        let accepted = challenges ?? [challenge]
        return try (verifier ?? self.verifier).verify(
            chain: chain, challenges: { _ in accepted }, hardwareKey: hardwareKey ?? self.hardwareKey, at: fixture.check_time
        )
    }

    private func assertRefused(
        _ name: String, _ kind: DeviceAttestationError.Kind, containing text: String,
        verifier: AndroidKeyAttestation? = nil, hardwareKey: JWK? = nil, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try verify(name, verifier: verifier, hardwareKey: hardwareKey), file: file, line: line) { error in
            guard let error = error as? DeviceAttestationError else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(error.kind, kind, error.reason, file: file, line: line)
            XCTAssertTrue(error.reason.contains(text), "\(error.reason) lacks \(text)", file: file, line: line)
        }
    }

    func testFixturesNameTheirSource() {
        XCTAssertEqual(fixture.source, "Tests/Fixtures/device-attestation/make_fixtures.py")
    }

    func testTrustedEnvironmentKey() throws {
        let attested = try verify("good_tee")
        XCTAssertEqual(attested.facts, DeviceFacts(model: "Pixel 9", os: "Android 14.0.0", securityLevel: .tee, integrity: true))
        XCTAssertEqual(attested.publicKey.thumbprint(), hardwareKey.thumbprint())
        XCTAssertEqual(attested.facts.securityLevel.keyStorage, "iso_18045_moderate")
    }

    func testStrongBoxKey() throws {
        let attested = try verify("good_strongbox")
        XCTAssertEqual(attested.facts.securityLevel, .strongBox)
        XCTAssertEqual(attested.facts.securityLevel.keyStorage, "iso_18045_high")
    }

    func testChallengesAreComputedFromTheAttestedKey() throws {
        let chain = try XCTUnwrap(fixture.android?["good_tee"])
        var seen: JWK?
        let attested = try verifier.verify(chain: chain, challenges: { key in seen = key; return [[1, 2, 3], self.challenge] }, at: fixture.check_time)
        XCTAssertEqual(seen?.thumbprint(), hardwareKey.thumbprint(), "the closure gets the leaf's key")
        XCTAssertEqual(attested.publicKey.thumbprint(), hardwareKey.thumbprint(), "no expected key: the leaf's is returned")
    }

    func testStandardAndURLSafeBase64AreBothRead() throws {
        let chain = try XCTUnwrap(fixture.android?["good_tee"]).map {
            $0.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        XCTAssertNoThrow(try verifier.verify(chain: chain, challenges: { _ in [self.challenge] }, at: fixture.check_time))
    }

    func testWrongChallenge() {
        assertRefused("wrong_challenge", .invalidAttestation, containing: "attestationChallenge")
        XCTAssertThrowsError(try verify("good_tee", challenges: [Array(challenge.dropLast())]))
    }

    func testSoftwareLevelIsAnIntegrityFailure() {
        assertRefused("software_level", .integrity, containing: "Software")
        XCTAssertEqual(
            DeviceAttestationError(.integrity, "x").errorCode, "integrity_check_error"
        )
    }

    func testSoftwareKeyMintIsAnIntegrityFailure() {
        assertRefused("software_keymint", .integrity, containing: "Software")
    }

    func testWeakerOfTheTwoLevelsCounts() throws {
        XCTAssertEqual(try verify("tee_key_attested_by_strongbox").facts.securityLevel, .tee)
    }

    func testUnverifiedBootIsAnIntegrityFailure() {
        assertRefused("unverified_boot", .integrity, containing: "Unverified")
    }

    func testWrongKey() throws {
        let other = try DeviceAttestationFixture.jwk(fixture.other_jwk!)
        assertRefused("good_tee", .invalidAttestation, containing: "not the hardware key", hardwareKey: other)
    }

    func testExpectedKeyComparesByThumbprintNotMetadata() throws {
        let decorated = hardwareKey.adding(["kid": .string("some-kid"), "use": .string("sig")])
        XCTAssertNoThrow(try verify("good_tee", hardwareKey: decorated))
    }

    func testWrongRoot() throws {
        assertRefused("wrong_root", .invalidAttestation, containing: "does not validate")
        let other = AndroidKeyAttestation(roots: [try Certificate(pem: fixture.other_root_pem)])
        assertRefused("good_tee", .invalidAttestation, containing: "does not validate", verifier: other)
        assertRefused("good_tee", .invalidAttestation, containing: "no attestation roots", verifier: AndroidKeyAttestation(roots: []))
    }

    func testGoogleRootsDoNotAcceptTestChains() {
        let google = AndroidKeyAttestation(roots: AttestationRoots.googleHardwareAttestation())
        assertRefused("good_tee", .invalidAttestation, containing: "does not validate", verifier: google)
    }

    func testExpiredChainIsRefused() throws {
        let chain = try XCTUnwrap(fixture.android?["good_tee"])
        // The test CAs end on 2045-01-01.
        XCTAssertThrowsError(try verifier.verify(chain: chain, challenges: { _ in [self.challenge] }, at: 2_400_000_000))
    }

    func testChainTooLong() {
        assertRefused("chain_too_long", .invalidAttestation, containing: "at most 8")
    }

    func testMalformedInput() {
        assertRefused("malformed_der", .invalidAttestation, containing: "not DER X.509")
        assertRefused("not_base64", .invalidAttestation, containing: "not base64")
        assertRefused("malformed_extension", .invalidAttestation, containing: "not valid DER")
        assertRefused("extension_not_schema", .invalidAttestation, containing: "not valid DER")
        XCTAssertThrowsError(try verifier.verify(chain: [], challenges: { _ in [] }, at: fixture.check_time))
    }

    func testAuthorizationListInAnyOrderButNoFieldTwice() throws {
        XCTAssertEqual(try verify("unordered_fields").facts.securityLevel, .tee)
        assertRefused("repeated_field", .invalidAttestation, containing: "twice")
    }

    func testLeafWithoutKeyDescription() {
        assertRefused("no_extension", .invalidAttestation, containing: "no KeyDescription")
    }

    func testKeyDescriptionAboveTheLeafIsRefused() {
        assertRefused("extension_above_leaf", .invalidAttestation, containing: "above the leaf")
    }
}

/// A real device's chain (google/android-key-attestation's test resources: EC key, TEE,
/// attestation version 3, challenge "abc") against the Google roots shipped in Entities/roots/.
final class DeviceAttestationAndroidRealChainTests: XCTestCase {
    private struct RealChain: Decodable {
        let source: String
        let challenge_hex: String
        let check_time: Int64
        let chain: [String]
    }

    func testRealDeviceChainValidatesToTheShippedGoogleRoots() throws {
        let url = DeviceAttestationFixture.directory.appendingPathComponent("google-android-key-attestation-ec-tee.json")
        let real = try JSONDecoder().decode(RealChain.self, from: Data(contentsOf: url))
        let verifier = AndroidKeyAttestation(roots: AttestationRoots.googleHardwareAttestation())
        let challenge = DeviceAttestationFixture.bytes(hex: real.challenge_hex)
        // That device was unlocked: the refusal comes after the chain (validated to the 2019
        // root, which has the 2016 root's name and key), the version 3 KeyDescription and the
        // challenge were all accepted.
        do throws(DeviceAttestationError) {
            let attested = try verifier.verify(chain: real.chain, challenges: { _ in [challenge] }, at: real.check_time)
            XCTFail("accepted: \(attested.facts)")
        } catch {
            XCTAssertEqual(error.kind, .integrity, error.reason)
            XCTAssertTrue(error.reason.contains("Unverified"), error.reason)
        }
        do throws(DeviceAttestationError) {
            _ = try verifier.verify(chain: real.chain, challenges: { _ in [[0x61, 0x62]] }, at: real.check_time)
            XCTFail("accepted another challenge")
        } catch {
            XCTAssertEqual(error.kind, .invalidAttestation, error.reason)
            XCTAssertTrue(error.reason.contains("attestationChallenge"), error.reason)
        }
        do throws(DeviceAttestationError) {
            _ = try AndroidKeyAttestation(roots: AttestationRoots.appleAppAttestation())
                .verify(chain: real.chain, challenges: { _ in [challenge] }, at: real.check_time)
            XCTFail("accepted under Apple's root")
        } catch {
            XCTAssertTrue(error.reason.contains("does not validate"), error.reason)
        }
    }
}
