import Cryptography
import Foundation
import JOSE
@testable import WalletProvider
import XCTest

final class WalletProviderKeysTests: XCTestCase {
    func testCreatedOncePrivatelyAndChained() throws {
        let directory = NSTemporaryDirectory() + "wp-keys-\(UUID().uuidString)/wallet-provider"
        let first = try WalletProviderKeys.loadOrCreate(directory: directory, provider: "https://wp.example.org", now: 1_800_000_000)
        let again = try WalletProviderKeys.loadOrCreate(directory: directory, provider: "https://wp.example.org", now: 1_800_000_100)
        XCTAssertEqual(first.ca, again.ca)
        XCTAssertEqual(first.signer, again.signer)
        XCTAssertEqual(first.deviceMakerRoot, again.deviceMakerRoot)
        XCTAssertEqual(first.nonceSecret, again.nonceSecret)
        XCTAssertEqual(first.signingJWK.kid, first.signingJWK.thumbprint())

        let attributes = try FileManager.default.attributesOfItem(atPath: directory)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o700)
        for name in ["ca.pem", "ca.key.pem", "signer.pem", "signer.key.pem", "device-maker.pem", "device-maker.key.pem", "nonce-secret"] {
            let file = try FileManager.default.attributesOfItem(atPath: directory + "/" + name)
            XCTAssertEqual((file[.posixPermissions] as? NSNumber)?.intValue, 0o600, name)
        }
        // The signer chains to the CA; x5c carries the signer alone.
        try Certificate.verifyChain(leaf: first.signer, roots: [first.ca], at: 1_800_000_000)
        XCTAssertEqual(first.x5c, Certificate.x5c([first.signer]))
        XCTAssertNotEqual(first.ca, first.deviceMakerRoot)
    }
}
