import Cryptography
import Foundation
import JOSE
import JSON
import Store
import Support
@testable import WalletProvider

/// A Wallet Provider on a fresh key folder and database, with a manual clock.
struct WalletProviderFixture {
    static let entityID = "https://wp.example.org"
    let provider: WalletProvider
    let clock: ManualClock
    let directory: String

    static func make(configuration: WalletProviderConfiguration = WalletProviderConfiguration(), databasePath: String? = nil,
                     entityID: String = entityID) throws -> WalletProviderFixture {
        let directory = NSTemporaryDirectory() + "wp-tests-\(UUID().uuidString)"
        let clock = ManualClock(1_800_000_000)
        let keys = try WalletProviderKeys.loadOrCreate(directory: directory + "/keys", provider: entityID, now: clock.now())
        let database = try Database(path: databasePath ?? ":memory:")
        let provider = WalletProvider(entityID: entityID, entityName: "wp", configuration: configuration, keys: keys,
                                      database: database, clock: clock, trustAnchors: [], adminToken: "admin-secret")
        return WalletProviderFixture(provider: provider, clock: clock, directory: directory)
    }
}

/// A device: its hardware key and the tag it gave it.
struct TestDevice {
    let key: PrivateKey
    let tag: String
    var jwk: JWK { JWK(publicKey: key.publicKey) }

    init(tag: String = "tag-\(UUID().uuidString)") throws {
        key = try PrivateKey(generatingFor: .ES256)
        self.tag = tag
    }

    /// A registration with a development key attestation the provider itself made.
    func registration(_ provider: WalletProvider, nonce: String, integrity: Bool = true) throws -> RegistrationRequest {
        let attestation = try provider.makeDevelopmentKeyAttestation(
            DevKeyAttestationRequest.parse(["jwk": jwk.jsonValue, "hardware_key_tag": .string(tag), "nonce": .string(nonce),
                                            "integrity": integrity ? "pass" : "fail"]))
        return try RegistrationRequest.parse(["nonce": .string(nonce), "key_attestation": .string(attestation),
                                              "hardware_key_tag": .string(tag)])
    }
}
