import Cryptography
import Foundation
import XCTest
@testable import WalletProvider

/// The shipped attestation roots: the compiled-in copies are the files in Entities/roots/, and
/// each certificate is the one its source names (the fingerprints in Entities/roots/README.md).
final class DeviceAttestationRootsTests: XCTestCase {
    private static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private func fingerprint(_ certificate: Certificate) -> String {
        Digest.sha256(certificate.der).map { String(format: "%02X", $0) }.joined()
    }

    func testCompiledRootsAreTheFilesInEntities() throws {
        let google = try String(contentsOf: Self.repository.appendingPathComponent("Entities/roots/google-hardware-attestation-roots.pem"), encoding: .utf8)
        let apple = try String(contentsOf: Self.repository.appendingPathComponent("Entities/roots/apple-app-attestation-root-ca.pem"), encoding: .utf8)
        XCTAssertEqual(try Certificate.certificates(pem: google), AttestationRoots.googleHardwareAttestation())
        XCTAssertEqual(try Certificate.certificates(pem: apple), AttestationRoots.appleAppAttestation())
    }

    func testGoogleRootsAreThePublishedOnes() {
        let roots = AttestationRoots.googleHardwareAttestation()
        XCTAssertEqual(roots.map(fingerprint), [
            "CEDB1CB6DC896AE5EC797348BCE9286753C2B38EE71CE0FBE34A9A1248800DFC",
            "6D9DB4CE6C5C0B293166D08986E05774A8776CEB525D9E4329520DE12BA4BCC0",
            "1EF1A04B8BA58AB94589AC498C8982A783F24EA7307E0159A0C3A73B377D87CC",
            "AB6641178A36E179AA0C1CDDDF9A16EB45FA20943E2B8CD7C7C05C26CF8B487A",
        ])
        for root in roots {
            XCTAssertTrue(root.isSigned(by: try! root.publicKey()), "self-signed: \(root.subjectText)")
        }
    }

    func testAppleRootIsThePublishedOne() throws {
        let roots = AttestationRoots.appleAppAttestation()
        XCTAssertEqual(roots.map(fingerprint), ["1CB9823BA28BA6AD2D33A006941DE2AE4F513EF1D4E831B9F7E0FA7B6242C932"])
        XCTAssertTrue(roots[0].subjectText.contains("Apple App Attestation Root CA"))
    }

    func testKeyStorageLevels() {
        XCTAssertNil(SecurityLevel.software.keyStorage)
        XCTAssertEqual(SecurityLevel.tee.keyStorage, "iso_18045_moderate")
        XCTAssertEqual(SecurityLevel.strongBox.keyStorage, "iso_18045_high")
        XCTAssertEqual(SecurityLevel.secureEnclave.keyStorage, "iso_18045_high")
        XCTAssertEqual(SecurityLevel.strongBox.rawValue, "strongbox")
        XCTAssertEqual(SecurityLevel.secureEnclave.rawValue, "secure_enclave")
    }

    func testErrorCodes() {
        XCTAssertEqual(DeviceAttestationError(.integrity, "x").errorCode, "integrity_check_error")
        XCTAssertTrue(DeviceAttestationError(.integrity, "x").isIntegrityFailure)
        XCTAssertEqual(DeviceAttestationError(.invalidAttestation, "x").errorCode, "invalid_request")
    }
}
