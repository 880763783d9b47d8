import Cryptography
import Foundation
import Issuance
import JOSE
import JSON
import TestSupport
import XCTest

/// Credential request and response encryption (OpenID4VCI 1.0 §8.2, §10, §12.2.4).
final class CredentialEncryptionTests: XCTestCase {
    typealias T = CredentialTestProvider

    /// The wallet's response-encryption key as it sends it: public, `alg: ECDH-ES`, a `kid`.
    private func walletKey() throws -> (PrivateKey, JWK) {
        let key = try PrivateKey(generatingECCurve: "P-256")
        let jwk = JWK(publicKey: key.publicKey, use: "enc").adding(["alg": "ECDH-ES", "kid": "wallet-enc-1"])
        return (key, jwk)
    }

    private func requestJSON(_ provider: PIDProvider, encryption: JSONValue?) throws -> JSONValue {
        var body: [String: JSONValue] = [
            "credential_configuration_id": "urn:eudi:pid:1",
            "proofs": ["jwt": [.string(try T.proof(PrivateKey(generatingFor: .ES256), nonce: provider.issueCNonce()))]],
        ]
        if let encryption { body["credential_response_encryption"] = encryption }
        return .object(body)
    }

    private func encrypted(_ provider: PIDProvider, _ json: JSONValue, enc: JWEContentEncryption = .A128GCM) throws -> [UInt8] {
        Array(try JWE.encrypt(json.bytes, to: provider.keys.encryptionJWK, encryption: enc).utf8)
    }

    private func code(_ body: () throws -> Any) -> IssuanceError.Code? {
        do { _ = try body(); return nil } catch { return (error as? IssuanceError)?.codeValue }
    }

    func testMetadata() throws {
        let provider = try T.make(encryptionRequired: true)
        let request = provider.credentialRequestEncryptionMetadata
        XCTAssertEqual(request["jwks"]?["keys"], [provider.keys.encryptionJWK.jsonValue])
        XCTAssertNotNil(request["jwks"]?["keys"]?.arrayValue?.first?["kid"]?.stringValue, "§12.2.4: every key needs a kid")
        XCTAssertEqual(request["enc_values_supported"], ["A128GCM", "A256GCM"])
        XCTAssertEqual(request["encryption_required"], true)
        XCTAssertNil(request["zip_values_supported"])
        let response = provider.credentialResponseEncryptionMetadata
        XCTAssertEqual(response["alg_values_supported"], ["ECDH-ES"])
        XCTAssertEqual(response["enc_values_supported"], ["A128GCM", "A256GCM"])
        XCTAssertEqual(response["encryption_required"], true)
        XCTAssertEqual(try T.make().credentialResponseEncryptionMetadata["encryption_required"], false)
    }

    func testEncryptedRequestGetsAnEncryptedResponse() throws {
        let provider = try T.make()
        let (walletKey, walletJWK) = try walletKey()
        for enc in JWEContentEncryption.allCases {
            let json = try requestJSON(provider, encryption: ["jwk": walletJWK.jsonValue, "enc": .string(enc.rawValue)])
            let response = try provider.credentialResponse(grant: T.grant(), mediaType: "application/jwt",
                                                           body: encrypted(provider, json, enc: .A256GCM))
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(response.contentType, "application/jwt")
            let jwe = try JWE.parse(String(decoding: response.body, as: UTF8.self))
            XCTAssertEqual(jwe.algorithm, "ECDH-ES")
            XCTAssertEqual(jwe.encryption, enc.rawValue)
            XCTAssertEqual(jwe.keyID, "wallet-enc-1", "§10: the JWE names the key it was encrypted to")
            let plain = try JSONValue.parse(jwe.decrypt(with: walletKey))
            XCTAssertEqual(plain["credentials"]?.arrayValue?.count, 1)
            XCTAssertNotNil(plain["notification_id"]?.stringValue)
        }
        // An encrypted request without response encryption gets plain JSON (§8.3).
        let plain = try provider.credentialResponse(grant: T.grant(), mediaType: "application/jwt",
                                                    body: encrypted(provider, try requestJSON(provider, encryption: nil)))
        XCTAssertEqual(plain.contentType, "application/json")
    }

    func testEncryptionRefusals() throws {
        let provider = try T.make()
        let (_, walletJWK) = try walletKey()
        let good: JSONValue = ["jwk": walletJWK.jsonValue, "enc": "A128GCM"]
        func send(_ encryption: JSONValue?, encrypt: Bool = true) -> IssuanceError.Code? {
            code {
                let json = try self.requestJSON(provider, encryption: encryption)
                return try provider.credentialResponse(grant: T.grant(), mediaType: encrypt ? "application/jwt" : "application/json",
                                                       body: encrypt ? self.encrypted(provider, json) : json.bytes)
            }
        }
        XCTAssertEqual(send(good, encrypt: false), .invalidEncryptionParameters,
                       "§8.2: credential_response_encryption only inside an encrypted request")
        var noAlg = walletJWK.json
        noAlg["alg"] = nil
        var keyWrap = walletJWK.json
        keyWrap["alg"] = "ECDH-ES+A128KW"
        var privateKey = walletJWK.json
        privateKey["d"] = .string(String(repeating: "A", count: 43))
        for (name, value) in [
            ("no alg", ["jwk": .object(noAlg), "enc": "A128GCM"]),
            ("key wrapping", ["jwk": .object(keyWrap), "enc": "A128GCM"]),
            ("private key", ["jwk": .object(privateKey), "enc": "A128GCM"]),
            ("bad enc", ["jwk": walletJWK.jsonValue, "enc": "A128CBC-HS256"]),
            ("zip", ["jwk": walletJWK.jsonValue, "enc": "A128GCM", "zip": "DEF"]),
            ("no jwk", ["enc": "A128GCM"]),
            ("not an object", "yes"),
        ] as [(String, JSONValue)] {
            XCTAssertEqual(send(value), .invalidEncryptionParameters, name)
        }
        // A JWE to another key, or garbage, does not decrypt.
        let other = try PrivateKey(generatingECCurve: "P-256")
        let otherJWK = JWK(publicKey: other.publicKey, use: "enc")
        let json = try requestJSON(provider, encryption: nil)
        XCTAssertEqual(code { try provider.credentialResponse(grant: T.grant(), mediaType: "application/jwt",
                                                              body: Array(try JWE.encrypt(json.bytes, to: otherJWK, encryption: .A128GCM).utf8)) },
                       .invalidEncryptionParameters)
        XCTAssertEqual(code { try provider.credentialResponse(grant: T.grant(), mediaType: "application/jwt", body: Array("a.b.c".utf8)) },
                       .invalidEncryptionParameters)
        XCTAssertEqual(code { try provider.credentialResponse(grant: T.grant(), mediaType: "application/jwt",
                                                              body: self.encrypted(provider, "not an object")) },
                       .invalidCredentialRequest)
        XCTAssertTrue(try provider.issuedCredentials(persona: nil).isEmpty)
    }

    func testEncryptionRequired() throws {
        let provider = try T.make(encryptionRequired: true)
        let (_, walletJWK) = try walletKey()
        let good: JSONValue = ["jwk": walletJWK.jsonValue, "enc": "A128GCM"]
        XCTAssertEqual(code { try provider.credentialResponse(grant: T.grant(), mediaType: "application/json",
                                                              body: try self.requestJSON(provider, encryption: nil).bytes) },
                       .invalidEncryptionParameters)
        XCTAssertEqual(code { try provider.credentialResponse(grant: T.grant(), mediaType: "application/jwt",
                                                              body: try self.encrypted(provider, self.requestJSON(provider, encryption: nil))) },
                       .invalidEncryptionParameters, "a response key is required too")
        let response = try provider.credentialResponse(grant: T.grant(), mediaType: "application/jwt",
                                                       body: encrypted(provider, requestJSON(provider, encryption: good)))
        XCTAssertEqual(response.contentType, "application/jwt")
    }

    /// joserfc (an independent JOSE implementation) encrypts the request to the issuer's
    /// published key and decrypts the issuer's encrypted response with the wallet's key.
    func testJoserfcEncryptsRequestsAndDecryptsResponses() throws {
        let provider = try T.make()
        let (walletKey, walletJWK) = try walletKey()
        let json = try requestJSON(provider, encryption: ["jwk": walletJWK.jsonValue, "enc": "A256GCM"])
        let encryptInput: JSONValue = ["jwk": provider.keys.encryptionJWK.jsonValue, "plaintext": .string(json.serialized())]
        let requestJWE = try PythonRunner.run(Self.encryptScript, input: encryptInput.serialized())
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let response = try provider.credentialResponse(grant: T.grant(), mediaType: "application/jwt", body: Array(requestJWE.utf8))
        let decryptInput: JSONValue = ["pem": .string(try walletKey.pemPKCS8()),
                                       "jwe": .string(String(decoding: response.body, as: UTF8.self))]
        let output = try JSONValue.parse(PythonRunner.run(Self.decryptScript, input: decryptInput.serialized()))
        XCTAssertEqual(output["header"]?["alg"], "ECDH-ES")
        XCTAssertEqual(output["header"]?["enc"], "A256GCM")
        XCTAssertEqual(output["header"]?["kid"], "wallet-enc-1")
        let plain = try JSONValue.parse(try XCTUnwrap(output["plaintext"]?.stringValue))
        XCTAssertEqual(plain["credentials"]?.arrayValue?.count, 1)
    }

    private static let encryptScript = #"""
import sys, json
try:
    from joserfc import jwe
    from joserfc.jwk import ECKey
except ImportError:
    sys.exit(3)
data = json.load(sys.stdin)
key = ECKey.import_key(data["jwk"])
header = {"alg": "ECDH-ES", "enc": "A128GCM", "kid": data["jwk"]["kid"]}
print(jwe.encrypt_compact(header, data["plaintext"].encode(), key, algorithms=["ECDH-ES", "A128GCM"]))
"""#

    private static let decryptScript = #"""
import sys, json
try:
    from joserfc import jwe
    from joserfc.jwk import ECKey
except ImportError:
    sys.exit(3)
data = json.load(sys.stdin)
key = ECKey.import_key(data["pem"])
obj = jwe.decrypt_compact(data["jwe"], key, algorithms=["ECDH-ES", "A128GCM", "A256GCM"])
print(json.dumps({"header": obj.headers(), "plaintext": obj.plaintext.decode()}))
"""#
}
