import Cryptography
import JOSE
import JSON
import SDJWT
import Support
@testable import Wallet
import XCTest

/// The wallet verifies an SD-JWT VC issued by the project's own SDJWT code under a test key,
/// found through the issuer's JWT VC Issuer Metadata (SD-JWT VC §4).
final class CredentialVerifierTests: XCTestCase {
    static let issuer = "https://issuer.example"

    private func configuration() throws -> IssuerMetadata.Configuration {
        let metadata = try IssuerMetadata(json: [
            "credential_issuer": .string(Self.issuer), "credential_endpoint": .string(Self.issuer + "/credential"),
            "credential_configurations_supported": ["pid": ["format": "dc+sd-jwt", "vct": "urn:eudi:pid:1"]],
        ], source: "test")
        return try XCTUnwrap(metadata.configurations["pid"])
    }

    private func issue(issuerKey: PrivateKey, kid: String, holder: HolderKey, vct: String = "urn:eudi:pid:1") throws -> String {
        let now = Int64(Date().timeIntervalSince1970)
        let issuer = SDJWTIssuer(key: issuerKey, algorithm: .ES256, keyID: kid)
        return try issuer.issueCompact(claims: [
            "iss": .string(Self.issuer), "vct": .string(vct), "iat": .int(now), "exp": .int(now + 3600),
            "cnf": ["jwk": .object(holder.publicJWK)], "given_name": "Erika", "family_name": "Mustermann",
        ], plan: .object(["given_name": .disclosable, "family_name": .disclosable]))
    }

    private func verifier(publishing key: PrivateKey, kid: String) throws -> CredentialVerifier {
        var jwk = JWK(publicKey: key.publicKey, algorithm: .ES256).json
        jwk["kid"] = .string(kid)
        let stub = StubTransport { request in
            request.url == Self.issuer + "/.well-known/jwt-vc-issuer"
                ? StubTransport.reply(200, ["issuer": .string(Self.issuer), "jwks": ["keys": [.object(jwk)]]])
                : StubTransport.reply(404)
        }
        return CredentialVerifier(http: try WalletHTTP(transport: stub), trustAnchors: nil)
    }

    func testAnSDJWTVCIssuedUnderATestKeyVerifies() throws {
        let issuerKey = try PrivateKey(generatingFor: .ES256), holder = try HolderKey()
        let credential = try issue(issuerKey: issuerKey, kid: "k1", holder: holder)
        let verified = try verifier(publishing: issuerKey, kid: "k1").verify(.string(credential), configuration: try configuration(), holders: [holder])
        XCTAssertEqual(verified.claims["given_name"]?.stringValue, "Erika")
        XCTAssertEqual(Set(verified.disclosedPaths).count, 2)
        XCTAssertTrue(verified.checks.contains("cnf.jwk = proof key"))
    }

    func testWrongKeyHolderOrTypeIsRefused() throws {
        let issuerKey = try PrivateKey(generatingFor: .ES256), holder = try HolderKey()
        let credential = try issue(issuerKey: issuerKey, kid: "k1", holder: holder)
        // Another issuer key published under the same kid.
        XCTAssertThrowsError(try verifier(publishing: try PrivateKey(generatingFor: .ES256), kid: "k1")
            .verify(.string(credential), configuration: try configuration(), holders: [holder]))
        // Bound to another key than the proof keys.
        XCTAssertThrowsError(try verifier(publishing: issuerKey, kid: "k1")
            .verify(.string(credential), configuration: try configuration(), holders: [try HolderKey()]))
        // Another vct than the configuration's.
        let other = try issue(issuerKey: issuerKey, kid: "k1", holder: holder, vct: "urn:other")
        XCTAssertThrowsError(try verifier(publishing: issuerKey, kid: "k1").verify(.string(other), configuration: try configuration(), holders: [holder]))
        // A tampered disclosure.
        XCTAssertThrowsError(try verifier(publishing: issuerKey, kid: "k1")
            .verify(.string(credential + "WyJ4IiwieSIsInoiXQ~"), configuration: try configuration(), holders: [holder]))
        XCTAssertThrowsError(try verifier(publishing: issuerKey, kid: "k1").verify(.int(1), configuration: try configuration(), holders: [holder]))
    }
}
