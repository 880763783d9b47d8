import Foundation
import JOSE
import JSON

/// A decoded (deferred) credential request body: its JSON, and whether it came encrypted.
public struct CredentialRequestBody: Sendable {
    public let json: JSONValue
    public let encrypted: Bool
}

/// What the credential and deferred credential endpoints answer (§8.3, §9.2): 200 with
/// credentials or 202 with a `transaction_id`, as JSON or, when the request asked for it, as a
/// JWE (§10, `application/jwt`).
public struct CredentialEndpointResponse: Sendable {
    public let status: Int
    public let contentType: String
    public let body: [UInt8]
}

/// Application-layer encryption of credential requests and responses (OpenID4VCI 1.0 §10,
/// §12.2.4): ECDH-ES key agreement with A128GCM or A256GCM, no compression.
extension PIDProvider {
    static let supportedContentEncryptions = JWEContentEncryption.allCases.map(\.rawValue)

    /// `credential_request_encryption` (§12.2.4): the issuer's encryption key (with `kid`, as
    /// §12.2.4 requires of every key in the set), the `enc` values it decrypts, and whether
    /// every request must be encrypted.
    public var credentialRequestEncryptionMetadata: JSONValue {
        [
            "jwks": ["keys": [keys.encryptionJWK.jsonValue]],
            "enc_values_supported": JSONValue(Self.supportedContentEncryptions),
            "encryption_required": .bool(configuration.encryptionRequired),
        ]
    }

    /// `credential_response_encryption` (§12.2.4).
    public var credentialResponseEncryptionMetadata: JSONValue {
        [
            "alg_values_supported": [.string(JWE.ecdhES)],
            "enc_values_supported": JSONValue(Self.supportedContentEncryptions),
            "encryption_required": .bool(configuration.encryptionRequired),
        ]
    }

    /// The request body as JSON: `application/json` as sent, or `application/jwt` = a JWE
    /// (compact) to our encryption key whose plaintext is the JSON request (§8.2, §10). A JWE
    /// that does not decrypt is `invalid_encryption_parameters`; any other media type or
    /// malformed JSON is `invalid_credential_request`.
    public func decodeCredentialRequestBody(mediaType: String?, body: [UInt8]) throws(IssuanceError) -> CredentialRequestBody {
        switch mediaType {
        case "application/json":
            return CredentialRequestBody(json: try Self.parseJSONObject(body), encrypted: false)
        case "application/jwt":
            let compact = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let plaintext: [UInt8]
            do throws(JWEError) {
                let jwe = try JWE.parse(compact)
                if let kid = jwe.keyID, kid != keys.encryptionJWK.kid {
                    throw .invalidKey("kid \(kid) is not the issuer's encryption key")
                }
                plaintext = try jwe.decrypt(with: keys.encryptionKey)
            } catch {
                throw IssuanceError(.invalidEncryptionParameters, "the encrypted request cannot be decrypted: \(error)")
            }
            return CredentialRequestBody(json: try Self.parseJSONObject(plaintext), encrypted: true)
        default:
            throw .invalidCredentialRequest("Content-Type must be application/json, or application/jwt for an encrypted request")
        }
    }

    /// The rules of §8.2 and §9.1 on top of the metadata: with `encryption_required` the request
    /// must be encrypted and ask for an encrypted response; and `credential_response_encryption`
    /// is accepted only inside an encrypted request, so nobody on the way can swap the key.
    func checkEncryption(_ responseEncryption: ResponseEncryption?, requestEncrypted: Bool) throws(IssuanceError) {
        if configuration.encryptionRequired {
            guard requestEncrypted else {
                throw IssuanceError(.invalidEncryptionParameters, "this issuer requires encrypted requests (application/jwt)")
            }
            guard responseEncryption != nil else {
                throw IssuanceError(.invalidEncryptionParameters, "this issuer requires credential_response_encryption")
            }
        }
        if responseEncryption != nil, !requestEncrypted {
            throw IssuanceError(.invalidEncryptionParameters,
                                "credential_response_encryption must be sent in an encrypted request (OpenID4VCI 1.0 §8.2)")
        }
    }

    /// The answer as JSON, or encrypted to the wallet's key: a JWE whose `kid` is the key's
    /// (when it has one) and whose plaintext is the JSON response (§10). `body` is the JSON text.
    func credentialEndpointResponse(_ body: [UInt8], status: Int, encryption: ResponseEncryption?) throws(IssuanceError)
        -> CredentialEndpointResponse {
        guard let encryption else {
            return CredentialEndpointResponse(status: status, contentType: "application/json", body: body)
        }
        do throws(JWEError) {
            let jwe = try JWE.encrypt(body, to: encryption.key, encryption: encryption.encryption)
            return CredentialEndpointResponse(status: status, contentType: "application/jwt", body: Array(jwe.utf8))
        } catch {
            throw IssuanceError(.invalidEncryptionParameters, "cannot encrypt to the given key: \(error)")
        }
    }

    static func parseJSONObject(_ bytes: [UInt8]) throws(IssuanceError) -> JSONValue {
        let value: JSONValue
        do { value = try JSONValue.parse(bytes) } catch { throw .invalidCredentialRequest("the body is not valid JSON: \(error)") }
        guard value.objectValue != nil else { throw .invalidCredentialRequest("the request must be a JSON object") }
        return value
    }
}
