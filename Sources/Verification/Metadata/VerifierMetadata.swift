import JOSE
import JSON

extension Verifier {
    /// `vp_formats_supported` (OpenID4VP 1.0 §11.1, Appendix B): what this verifier checks.
    /// `mso_mdoc` is named because mdoc verification is part of the verifier's scope; a
    /// presentation in it is refused with the reason until it is wired in.
    public static var formatsSupported: JSONValue {
        [
            "dc+sd-jwt": ["sd-jwt_alg_values": ["ES256"], "kb-jwt_alg_values": ["ES256"]],
            "mso_mdoc": ["issuerauth_alg_values": [-7], "deviceauth_alg_values": [-7]],
        ]
    }

    /// `client_metadata` of request objects under the x509 prefixes (§5.1): the keys (the
    /// response encryption key among them, §8.3), the content encryptions accepted and the formats.
    public var clientMetadata: [String: JSONValue] {
        [
            "jwks": ["keys": [keys.encryptionJWK.jsonValue]],
            "encrypted_response_enc_values_supported": .array(Self.encryptionValues.map { .string($0.rawValue) }),
            "vp_formats_supported": Self.formatsSupported,
        ]
    }

    /// `openid_credential_verifier` metadata (OpenID4VP 1.0 §11 with OpenID Federation's
    /// common `jwks`), merged into the entity configuration under the entity file's own members
    /// (which win): the request signing key and the response encryption key, the modes and
    /// formats, where responses go.
    public var verifierMetadata: [String: JSONValue] {
        [
            "client_name": .string(configuration.clientName),
            "jwks": ["keys": [keys.signingJWK.jsonValue, keys.encryptionJWK.jsonValue]],
            "response_types": ["vp_token"],
            "response_modes_supported": .array(ResponseMode.allCases.map { .string($0.rawValue) }),
            "request_object_signing_alg_values_supported": ["ES256"],
            "encrypted_response_alg_values_supported": ["ECDH-ES"],
            "encrypted_response_enc_values_supported": .array(Self.encryptionValues.map { .string($0.rawValue) }),
            "vp_formats_supported": Self.formatsSupported,
            "response_uris_supported": [.string(urls.response)],
        ]
    }
}
