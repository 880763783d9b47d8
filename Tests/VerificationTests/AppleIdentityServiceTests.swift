import Cryptography
import Foundation
import JSON
import Support
@testable import Verification
import XCTest

/// `services.verifier.apple`: the configuration, the merchant's key and certificate in `Keys/`,
/// and the request shape of `POST <rp>/apple/identity`.
final class AppleIdentityServiceTests: XCTestCase {
    func testConfigurationIsParsedStrictly() throws {
        let parsed = try VerifierConfiguration.parse(JSONReader([
            "apple": ["merchant_id": "merchant.example", "team_id": "TEAM", "key": "apple.key.pem"],
        ]))
        XCTAssertEqual(parsed.apple, AppleIdentityConfiguration(merchantID: "merchant.example", teamID: "TEAM", keyFile: "apple.key.pem"))
        XCTAssertNil(try VerifierConfiguration.parse(JSONReader([:])).apple)
        XCTAssertThrowsError(try VerifierConfiguration.parse(JSONReader(["apple": ["merchant_id": "m"]]))) {
            XCTAssertTrue("\($0)".contains("team_id"), "\($0)")
        }
        XCTAssertThrowsError(try VerifierConfiguration.parse(JSONReader([
            "apple": ["merchant_id": "m", "team_id": "t", "merchant": "typo"],
        ])))
    }

    func testKeysAreCreatedOnceAndTheCertificateFollowsAConfiguredKey() throws {
        let directory = NSTemporaryDirectory() + "apple-keys-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try AppleIdentityKeys.loadOrCreate(directory: directory, configuredKey: nil, merchantID: "m", now: 1_800_000_000)
        XCTAssertEqual(try first.certificate.publicKey(), first.key.publicKey)
        let again = try AppleIdentityKeys.loadOrCreate(directory: directory, configuredKey: nil, merchantID: "m", now: 1_800_000_100)
        XCTAssertEqual(again.key.publicKey, first.key.publicKey, "never overwritten")
        XCTAssertEqual(again.certificate.der, first.certificate.der)
        let configured = try PrivateKey(generatingECCurve: "P-256")
        let replaced = try AppleIdentityKeys.loadOrCreate(directory: directory, configuredKey: configured, merchantID: "m", now: 1_800_000_200)
        XCTAssertEqual(try replaced.certificate.publicKey(), configured.publicKey)
        XCTAssertThrowsError(try AppleIdentityKeys.loadOrCreate(directory: directory, configuredKey: try PrivateKey(generatingECCurve: "P-384"),
                                                                 merchantID: "m", now: 1_800_000_300))
    }

    func testRequestShapeErrorsAreInvalidRequest() throws {
        let directory = NSTemporaryDirectory() + "apple-keys-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let keys = try AppleIdentityKeys.loadOrCreate(directory: directory, configuredKey: nil, merchantID: "m", now: 1_800_000_000)
        let service = AppleIdentityService(configuration: AppleIdentityConfiguration(merchantID: "m", teamID: "t"), keys: keys,
                                           clock: ManualClock(1_800_000_000), trustAnchors: { [] })
        let bad: [JSONValue] = [
            .array([]), ["nonce": "YWJj"], ["envelope": "oA"], ["envelope": "@@", "nonce": "YWJj"], ["envelope": "oA", "nonce": ""],
            ["envelope": .string(String(repeating: "A", count: 400_000)), "nonce": "YWJj"],
        ]
        for body in bad {
            XCTAssertThrowsError(try service.verify(body), "\(body)") { XCTAssertEqual(($0 as? VerificationError)?.codeValue, .invalidRequest) }
        }
        // Well-formed but not an envelope: a refused report, not an error. Standard base64 and padding accepted.
        let report = try service.verify(["envelope": "oA==", "nonce": "YWJj+/8="])
        XCTAssertFalse(report.verified)
        XCTAssertEqual(report.checks.first?.name, "envelope")
    }
}
