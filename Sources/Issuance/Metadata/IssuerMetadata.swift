import Cryptography
import JOSE
import JSON

/// The PID Provider's published metadata, generated from its configuration so that what it
/// advertises and what it does cannot drift apart. The same objects go into the entity's
/// federation entity configuration (`openid_credential_issuer`, `oauth_authorization_server`),
/// where the entity file may still override or extend them.
extension PIDProvider {
    /// Credential Issuer Metadata (OpenID4VCI 1.0 §12.2.4).
    public var credentialIssuerMetadata: [String: JSONValue] {
        var configurations: [String: JSONValue] = [:]
        for c in configuration.credentialConfigurations {
            configurations[c.id] = Self.configurationMetadata(c, domesticNameSpace: configuration.domesticNameSpace(for: c))
        }
        return [
            "credential_issuer": .string(issuer),
            "authorization_servers": [.string(issuer)],
            "credential_endpoint": .string(urls.credential),
            "nonce_endpoint": .string(urls.nonce),
            "deferred_credential_endpoint": .string(urls.deferredCredential),
            "notification_endpoint": .string(urls.notification),
            "credential_request_encryption": credentialRequestEncryptionMetadata,
            "credential_response_encryption": credentialResponseEncryptionMetadata,
            "batch_credential_issuance": ["batch_size": .int(Int64(configuration.batchSize))],
            "display": configuration.display,
            "credential_configurations_supported": .object(configurations),
            // OpenID Federation §5.2.1's common `jwks`: the SD-JWT VC signing key, so a verifier
            // that trusts the issuer through its trust chain verifies credentials with it.
            "jwks": ["keys": [keys.signingJWK.jsonValue]],
        ]
    }

    /// One `credential_configurations_supported` entry (Appendix A.2 for `mso_mdoc`, A.3 for
    /// `dc+sd-jwt`): mdoc signing algorithms are COSE integers (-7 = ES256), SD-JWT VC's JOSE names.
    static func configurationMetadata(_ c: CredentialConfiguration, domesticNameSpace: String) -> JSONValue {
        var entry: [String: JSONValue] = [
            "format": .string(c.format.rawValue),
            "scope": .string(c.scope),
            "proof_types_supported": proofTypesMetadata(c),
        ]
        switch c.format {
        case .sdJWT:
            entry["vct"] = .string(c.type)
            entry["cryptographic_binding_methods_supported"] = ["jwk"]
            entry["credential_signing_alg_values_supported"] = ["ES256"]
        case .mdoc:
            entry["doctype"] = .string(c.type)
            entry["cryptographic_binding_methods_supported"] = ["cose_key"]
            entry["credential_signing_alg_values_supported"] = [-7]
        }
        var credentialMetadata: [String: JSONValue] = ["claims": PIDClaimDisplay.claims(for: c, domesticNameSpace: domesticNameSpace)]
        credentialMetadata["display"] = c.display ?? [["name": .string(c.profile == .nl ? "NL PID" : "EU PID"), "locale": "en"]]
        entry["credential_metadata"] = .object(credentialMetadata)
        return .object(entry)
    }

    /// `proof_types_supported` (§12.2.4, Appendix F): `jwt` proofs (F.1), optionally carrying a
    /// key attestation, and `attestation` proofs (F.3), a key attestation alone. With
    /// `key_attestations_required` both name it, so a wallet knows to attest its keys.
    static func proofTypesMetadata(_ c: CredentialConfiguration) -> JSONValue {
        var proofType: [String: JSONValue] = ["proof_signing_alg_values_supported": ["ES256"]]
        if let required = c.keyAttestationsRequired { proofType["key_attestations_required"] = required.json }
        return ["jwt": .object(proofType), "attestation": .object(proofType)]
    }

    /// OAuth 2.0 Authorization Server Metadata (RFC 8414), with PAR (RFC 9126), DPoP (RFC 9449
    /// §5.1), RFC 9207's `iss`, OpenID4VCI's pre-authorized grant and attestation-based client
    /// authentication.
    public var authorizationServerMetadata: [String: JSONValue] {
        [
            "issuer": .string(issuer),
            "authorization_endpoint": .string(urls.authorization),
            "token_endpoint": .string(urls.token),
            "pushed_authorization_request_endpoint": .string(urls.pushedAuthorizationRequest),
            "require_pushed_authorization_requests": true,
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "urn:ietf:params:oauth:grant-type:pre-authorized_code"],
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": .array(configuration.credentialConfigurations.map { .string($0.scope) }),
            "authorization_details_types_supported": ["openid_credential"],
            "dpop_signing_alg_values_supported": ["ES256"],
            "pre-authorized_grant_anonymous_access_supported": .bool(!configuration.requireClientAttestation),
            "authorization_response_iss_parameter_supported": true,
            "token_endpoint_auth_methods_supported": configuration.requireClientAttestation
                ? ["attest_jwt_client_auth"] : ["attest_jwt_client_auth", "none"],
            "client_attestation_signing_alg_values_supported": ["ES256"],
            "client_attestation_pop_signing_alg_values_supported": ["ES256"],
        ]
    }

    /// JWT VC Issuer Metadata (SD-JWT VC §5): the keys SD-JWT VCs of this issuer are signed with.
    public var jwtVCIssuerMetadata: [String: JSONValue] {
        ["issuer": .string(issuer), "jwks": ["keys": [keys.signingJWK.jsonValue]]]
    }

    /// Signed Credential Issuer Metadata (OpenID4VCI 1.0 §12.2.2–12.2.3): the same document as
    /// JWT claims with `sub` = the issuer and `iat`, typed `openidvci-issuer-metadata+jwt` and
    /// signed with the credential signer key (not the mdoc document signer), whose certificate
    /// rides in `x5c`.
    public func signedCredentialIssuerMetadata() throws -> String {
        var claims = credentialIssuerMetadata
        let now = clock.now()
        claims["iss"] = .string(issuer)
        claims["sub"] = .string(issuer)
        claims["iat"] = .int(now)
        claims["exp"] = .int(now + 86_400)
        let header: [String: JSONValue] = [
            "typ": "openidvci-issuer-metadata+jwt",
            "x5c": .array(keys.x5c.map(JSONValue.string)),
        ]
        return try JWS.sign(header: header, payloadBytes: JSONValue.object(claims).bytes, key: keys.credentialSignerKey,
                                   algorithm: .ES256)
    }

    /// The entity file's metadata with the generated issuer and authorization server metadata
    /// underneath: a member the file gives replaces the generated one.
    public func mergedEntityMetadata(_ declared: [String: JSONValue]) -> [String: JSONValue] {
        var out = declared
        for (type, generated) in [("openid_credential_issuer", credentialIssuerMetadata),
                                  ("oauth_authorization_server", authorizationServerMetadata)] {
            var merged = generated
            for (k, v) in declared[type]?.objectValue ?? [:] { merged[k] = v }
            out[type] = .object(merged)
        }
        return out
    }
}
