import JSON
import WalletProvider
import XCTest

final class WalletProviderConfigurationTests: XCTestCase {
    private func parse(_ json: String) throws -> WalletProviderConfiguration {
        try WalletProviderConfiguration.parse(JSONReader(JSONValue.parse(Array(json.utf8))))
    }

    func testDefaults() throws {
        let c = try parse("{}")
        XCTAssertEqual(c.attestationLifetime, 3_600)
        XCTAssertEqual(c.nonceLifetime, 300)
        XCTAssertEqual(c.clientID, .thumbprint)
        XCTAssertTrue(c.devAttestations)
        XCTAssertEqual(c.trustAnchors, [])
    }

    func testEveryMember() throws {
        let c = try parse("""
            {"trust_anchors": ["ta"], "attestation_lifetime": 86400, "nonce_lifetime": 60, "aal": "https://aal.example/high",
             "client_id": "wallet-solution", "wallet_name": "W", "wallet_link": "https://wallet.example",
             "android_roots": ["a.pem"], "apple_roots": ["b.pem"], "apple_app_ids": ["ABCDE12345.org.example.wallet"],
             "dev_attestations": false}
            """)
        XCTAssertEqual(c.trustAnchors, ["ta"])
        XCTAssertEqual(c.attestationLifetime, 86_400)
        XCTAssertEqual(c.nonceLifetime, 60)
        XCTAssertEqual(c.aal, "https://aal.example/high")
        XCTAssertEqual(c.clientID, .fixed("wallet-solution"))
        XCTAssertEqual(c.walletName, "W")
        XCTAssertEqual(c.walletLink, "https://wallet.example")
        XCTAssertEqual(c.androidRootFiles, ["a.pem"])
        XCTAssertEqual(c.appleRootFiles, ["b.pem"])
        XCTAssertEqual(c.appleAppIDs, ["ABCDE12345.org.example.wallet"])
        XCTAssertFalse(c.devAttestations)
        XCTAssertEqual(try parse(#"{"client_id": "thumbprint"}"#).clientID, .thumbprint)
    }

    func testRefusals() {
        for bad in [#"{"jwks_uri": "x"}"#, #"{"attestation_lifetime": 86401}"#, #"{"attestation_lifetime": 0}"#,
                    #"{"nonce_lifetime": "300"}"#, #"{"client_id": ""}"#, #"{"apple_app_ids": ["org.example.wallet"]}"#,
                    #"{"wallet_link": "not a url"}"#, #"{"dev_attestations": "yes"}"#, #"{"trust_anchors": "ta"}"#] {
            XCTAssertThrowsError(try parse(bad), bad) { error in
                XCTAssertTrue("\(error)".contains("services") || "\(error)".contains("$") || !"\(error)".isEmpty)
            }
        }
    }

    func testLifetimeRefusalNamesTheField() {
        XCTAssertThrowsError(try parse(#"{"attestation_lifetime": 90000}"#)) { error in
            XCTAssertTrue("\(error)".contains("attestation_lifetime"), "\(error)")
            XCTAssertTrue("\(error)".contains("86400"), "\(error)")
        }
    }
}

/// Issue 21's members: NL accounts (remote keys), PIN attempts, the recovery code deny list,
/// transfer and challenge lifetimes.
final class WalletProviderNLConfigurationTests: XCTestCase {
    private func parse(_ json: String) throws -> WalletProviderConfiguration {
        try WalletProviderConfiguration.parse(JSONReader(JSONValue.parse(Array(json.utf8))))
    }

    func testDefaultsAndMembers() throws {
        let defaults = try parse("{}")
        XCTAssertFalse(defaults.remoteKeys)
        XCTAssertEqual(defaults.pinAttempts, 4)
        XCTAssertEqual(defaults.recoveryCodeDenyList, [])
        XCTAssertEqual(defaults.transferLifetime, 3_600)
        XCTAssertEqual(defaults.challengeLifetime, 60)
        let c = try parse("""
            {"remote_keys": true, "pin_attempts": 3, "recovery_code_deny_list": ["0000"], "transfer_lifetime": 600,
             "challenge_lifetime": 30}
            """)
        XCTAssertTrue(c.remoteKeys)
        XCTAssertEqual(c.pinAttempts, 3)
        XCTAssertEqual(c.recoveryCodeDenyList, ["0000"])
        XCTAssertEqual(c.transferLifetime, 600)
        XCTAssertEqual(c.challengeLifetime, 30)
        for bad in [#"{"remote_keys": "yes"}"#, #"{"pin_attempts": 0}"#, #"{"recovery_code_deny_list": "0000"}"#,
                    #"{"transfer_lifetime": -1}"#, #"{"challenge_lifetime": 0}"#, #"{"pin_attempt": 4}"#] {
            XCTAssertThrowsError(try parse(bad), bad)
        }
    }
}
