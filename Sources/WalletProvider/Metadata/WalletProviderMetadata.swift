import JSON

extension WalletProvider {
    /// The grant a wallet attestation is obtained with (IT-Wallet, wallet attestation issuance).
    public static let attestationGrantType = "urn:ietf:params:oauth:client-assertion-type:jwt-client-attestation"

    /// `wallet_provider` metadata (issue 20, item 2), merged into the entity configuration
    /// under the entity file's own members (which win): the signing key (`kid` = its RFC 7638
    /// thumbprint) inline, so a relying party needs no `jwks_uri` fetch, the token and nonce
    /// endpoints and what the token endpoint takes.
    public var walletProviderMetadata: [String: JSONValue] {
        [
            "jwks": ["keys": [keys.signingJWK.jsonValue]],
            "token_endpoint": .string(urls.token),
            "nonce_endpoint": .string(urls.nonce),
            "aal_values_supported": [.string(configuration.aal)],
            "grant_types_supported": [.string(Self.attestationGrantType)],
            "token_endpoint_auth_methods_supported": ["private_key_jwt"],
            "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
        ]
    }

    /// `federation_entity` members the IT-Wallet trust model asks of a Wallet Provider
    /// (organization and the URLs of its home page, policy, terms and logo), each served here.
    public var federationEntityMetadata: [String: JSONValue] {
        [
            "organization_name": "Trustbed Wallet Provider",
            "homepage_uri": .string(urls.entityID),
            "policy_uri": .string(urls.policy),
            "tos_uri": .string(urls.terms),
            "logo_uri": .string(urls.logo),
        ]
    }
}
