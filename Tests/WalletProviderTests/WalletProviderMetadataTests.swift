import JSON
@testable import WalletProvider
import XCTest

final class WalletProviderMetadataTests: XCTestCase {
    func testWalletProviderMetadata() throws {
        let f = try WalletProviderFixture.make()
        let m = f.provider.walletProviderMetadata
        XCTAssertEqual(m["token_endpoint"], "https://wp.example.org/token")
        XCTAssertEqual(m["nonce_endpoint"], "https://wp.example.org/nonce")
        XCTAssertEqual(m["grant_types_supported"], ["urn:ietf:params:oauth:client-assertion-type:jwt-client-attestation"])
        XCTAssertEqual(m["token_endpoint_auth_methods_supported"], ["private_key_jwt"])
        XCTAssertEqual(m["token_endpoint_auth_signing_alg_values_supported"], ["ES256"])
        XCTAssertEqual(m["aal_values_supported"], [.string(f.provider.configuration.aal)])
        let keys = try XCTUnwrap(m["jwks"]?.objectValue?["keys"]?.arrayValue)
        XCTAssertEqual(keys, [f.provider.keys.signingJWK.jsonValue])
        XCTAssertNil(m["jwks_uri"])
        let fe = f.provider.federationEntityMetadata
        for member in ["organization_name", "homepage_uri", "policy_uri", "tos_uri", "logo_uri"] { XCTAssertNotNil(fe[member], member) }
    }

    func testDevEndpointOpenOnlyOnLoopback() throws {
        XCTAssertTrue(try WalletProviderFixture.make().provider.devEndpointNeedsAdminToken)
        XCTAssertFalse(try WalletProviderFixture.make(entityID: "http://127.0.0.1:8080/wp").provider.devEndpointNeedsAdminToken)
        XCTAssertFalse(try WalletProviderFixture.make(entityID: "http://localhost:8080").provider.devEndpointNeedsAdminToken)
    }
}
