import Cryptography
import JOSE
import JSON
import SDJWT
import Support
@testable import Wallet
import XCTest

/// Proofs the wallet builds (RFC 9449 §4.2, OpenID4VCI 1.0 Appendix F.1) and how it reads token
/// responses, lenient where the specs allow (RFC 9449 §5) or the peer's bug is harmless.
final class WalletSessionTests: XCTestCase {
    static let issuer = "https://issuer.example"

    static func context() throws -> IssuerContext {
        let issuer = try IssuerMetadata(json: [
            "credential_issuer": .string(Self.issuer), "credential_endpoint": .string(Self.issuer + "/credential"),
            "credential_configurations_supported": ["pid": ["format": "dc+sd-jwt", "vct": "urn:eudi:pid:1"]],
        ], source: "test")
        let server = try AuthorizationServerMetadata(json: [
            "issuer": .string(Self.issuer), "token_endpoint": .string(Self.issuer + "/token"),
            "dpop_signing_alg_values_supported": ["ES256"],
        ], source: "test")
        return IssuerContext(issuer: issuer, authorizationServer: server)
    }

    func testKeyProofShapeAndSignature() throws {
        let key = try HolderKey()
        let proof = try WalletProofs.keyProof(key: key, audience: Self.issuer, nonce: "n-1", clientID: "wallet-1")
        let jws = try JWS.parse(proof)
        XCTAssertEqual(jws.type, "openid4vci-proof+jwt")
        XCTAssertEqual(jws.algorithm, "ES256")
        XCTAssertEqual(jws.header["jwk"]?.objectValue, key.publicJWK)
        let used = try jws.verifyWithEmbeddedKey(allowList: [.ES256], expectedType: "openid4vci-proof+jwt")
        XCTAssertEqual(used.json, key.publicJWK)
        let claims = try jws.payload()
        XCTAssertEqual(claims["aud"]?.stringValue, Self.issuer)
        XCTAssertEqual(claims["nonce"]?.stringValue, "n-1")
        XCTAssertEqual(claims["iss"]?.stringValue, "wallet-1")
        XCTAssertNotNil(claims["iat"]?.intValue)
        // F.1: iss is left out when the wallet does not identify itself.
        XCTAssertNil(try JWS.parse(WalletProofs.keyProof(key: key, audience: Self.issuer, nonce: nil, clientID: nil)).payload()["iss"])
    }

    func testDPoPProofBindsMethodURLAndToken() throws {
        let key = try HolderKey()
        let proof = try JWS.parse(WalletProofs.dpop(key: key, method: "POST", url: Self.issuer + "/credential?x=1#f", nonce: "dn",
                                                    accessToken: "token-1"))
        XCTAssertEqual(proof.type, "dpop+jwt")
        let claims = try proof.payload()
        XCTAssertEqual(claims["htm"]?.stringValue, "POST")
        XCTAssertEqual(claims["htu"]?.stringValue, Self.issuer + "/credential")
        XCTAssertEqual(claims["nonce"]?.stringValue, "dn")
        XCTAssertEqual(claims["ath"]?.stringValue, Base64URL.encode(Digest.sha256(Array("token-1".utf8))))
        let (verifier, challenge) = WalletProofs.pkce()
        XCTAssertEqual(verifier.count, 43)
        XCTAssertEqual(challenge, Base64URL.encode(Digest.sha256(Array(verifier.utf8))))
    }

    /// RFC 9449 §5: a Bearer token answered to a DPoP-proofed request is used as a Bearer token.
    func testBearerTokenForADPoPClientIsUsedAsBearer() throws {
        let stub = StubTransport { request in
            if request.url.hasSuffix("/token") {
                return StubTransport.reply(200, ["access_token": "at-1", "token_type": "Bearer"])
            }
            return StubTransport.reply(200, ["credentials": [["credential": "x"]]])
        }
        let session = try WalletSession(context: try Self.context(), http: try WalletHTTP(transport: stub), dpop: true)
        let token = try session.preAuthorizedToken(code: "c", txCode: nil)
        XCTAssertEqual(token.tokenType, "Bearer")
        XCTAssertEqual(session.warnings.count, 1)
        XCTAssertTrue(session.warnings[0].contains("RFC 9449 §5"))
        XCTAssertNotNil(stub.requests[0].header("DPoP"), "the token request carried a proof")
        _ = try session.credential(accessToken: token.accessToken, configurationID: "pid", identifier: nil, keys: [try HolderKey()], nonce: nil)
        let credential = try XCTUnwrap(stub.requests.last)
        XCTAssertNil(credential.header("DPoP"), "no DPoP proof with a Bearer token")
        XCTAssertEqual(credential.header("Authorization"), "Bearer at-1")
    }

    func testDPoPTokenIsSentWithAProof() throws {
        let stub = StubTransport { request in
            request.url.hasSuffix("/token") ? StubTransport.reply(200, ["access_token": "at-2", "token_type": "DPoP"])
                : StubTransport.reply(200, ["credentials": [["credential": "x"]]])
        }
        let session = try WalletSession(context: try Self.context(), http: try WalletHTTP(transport: stub), dpop: true)
        let token = try session.preAuthorizedToken(code: "c", txCode: nil)
        _ = try session.credential(accessToken: token.accessToken, configurationID: "pid", identifier: nil, keys: [try HolderKey()], nonce: nil)
        XCTAssertNotNil(stub.requests.last?.header("DPoP"))
        XCTAssertEqual(stub.requests.last?.header("Authorization"), "DPoP at-2")
        XCTAssertEqual(session.warnings, [])
    }

    func testADPoPTokenWithoutAProofIsRefused() throws {
        let stub = StubTransport { _ in StubTransport.reply(200, ["access_token": "at", "token_type": "DPoP"]) }
        let session = try WalletSession(context: try Self.context(), http: try WalletHTTP(transport: stub), dpop: false)
        XCTAssertThrowsError(try session.preAuthorizedToken(code: "c", txCode: nil))
    }

    /// RFC 9396 §2 requires `type`; an entry without it is read as openid_credential, with one warning.
    func testTypelessAuthorizationDetailsAreReadWithAWarning() throws {
        let stub = StubTransport { _ in
            StubTransport.reply(200, [
                "access_token": "at", "token_type": "Bearer",
                "authorization_details": [
                    ["credential_configuration_id": "pid", "credential_identifiers": ["pid-1", "pid-2"]],
                    ["credential_configuration_id": "other", "credential_identifiers": ["o-1"]],
                    ["type": "something_else", "credential_configuration_id": "pid", "credential_identifiers": ["no"]],
                ],
                "credential_previews": ["big": "ignored"],
            ])
        }
        let session = try WalletSession(context: try Self.context(), http: try WalletHTTP(transport: stub), dpop: false)
        let token = try session.preAuthorizedToken(code: "c", txCode: nil)
        XCTAssertEqual(token.credentialIdentifiers["pid"], ["pid-1", "pid-2"])
        XCTAssertEqual(token.credentialIdentifiers["other"], ["o-1"])
        XCTAssertEqual(session.warnings.count, 1)
        XCTAssertTrue(session.warnings[0].contains("without \"type\""))
        XCTAssertNil(token.json["credential_previews"], "members the wallet does not read are not built")
    }

    func testMalformedTokenResponsesAreRefused() throws {
        for body: JSONValue in [["token_type": "Bearer"], ["access_token": "", "token_type": "Bearer"],
                                ["access_token": "a", "token_type": "mac"], ["access_token": "a", "token_type": "Bearer", "authorization_details": "x"]] {
            let stub = StubTransport { _ in StubTransport.reply(200, body) }
            let session = try WalletSession(context: try Self.context(), http: try WalletHTTP(transport: stub), dpop: false)
            XCTAssertThrowsError(try session.preAuthorizedToken(code: "c", txCode: nil), body.serialized())
        }
        let failing = StubTransport { _ in StubTransport.reply(400, ["error": "invalid_grant"]) }
        let session = try WalletSession(context: try Self.context(), http: try WalletHTTP(transport: failing), dpop: false)
        XCTAssertThrowsError(try session.preAuthorizedToken(code: "c", txCode: nil)) { XCTAssertTrue("\($0)".contains("invalid_grant")) }
    }
}
