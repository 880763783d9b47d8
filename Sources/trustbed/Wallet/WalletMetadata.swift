import JSON

/// What the wallet needs from the Credential Issuer Metadata (OpenID4VCI 1.0 §12.2.4).
struct IssuerMetadata {
    struct Configuration {
        let id: String
        let format: String
        /// SD-JWT VC `vct` (Appendix A.3.2) or mdoc `doctype` (A.2.2).
        let vct: String?
        let doctype: String?
        let scope: String?
        /// `proof_types_supported.jwt.proof_signing_alg_values_supported`; nil when no jwt proof is advertised.
        let jwtProofAlgorithms: [String]?
    }

    let credentialIssuer: String
    let authorizationServers: [String]
    let credentialEndpoint: String
    let nonceEndpoint: String?
    let deferredCredentialEndpoint: String?
    let notificationEndpoint: String?
    let batchSize: Int?
    let configurations: [String: Configuration]
    let json: [String: JSONValue]

    /// Fetches the metadata for `issuer` and checks that it names itself (§12.2.2: the
    /// `credential_issuer` value must be identical to the identifier it was fetched for).
    static func fetch(_ issuer: String, http: WalletHTTP) throws -> IssuerMetadata {
        let (url, json) = try WellKnown.fetch(issuer, "openid-credential-issuer", http: http)
        let metadata = try IssuerMetadata(json: json, source: url)
        guard metadata.credentialIssuer == issuer else {
            throw WalletError.malformed("\(url) names credential_issuer \(metadata.credentialIssuer), not \(issuer)")
        }
        return metadata
    }

    init(json: [String: JSONValue], source: String) throws {
        self = try reading(source) { () throws(JSONReadError) in try IssuerMetadata(reading: json) }
    }

    private init(reading json: [String: JSONValue]) throws(JSONReadError) {
        self.json = json
        do {
            let reader = JSONReader(json)
            credentialIssuer = try reader.url("credential_issuer")
            authorizationServers = try reader.optionalStringArray("authorization_servers") ?? []
            credentialEndpoint = try reader.url("credential_endpoint")
            nonceEndpoint = try reader.optionalURL("nonce_endpoint")
            deferredCredentialEndpoint = try reader.optionalURL("deferred_credential_endpoint")
            notificationEndpoint = try reader.optionalURL("notification_endpoint")
            batchSize = try reader.optionalObject("batch_credential_issuance")?.optionalInt("batch_size").map(Int.init)
            var configurations: [String: Configuration] = [:]
            for (id, field) in try reader.object("credential_configurations_supported").members {
                let entry = try field.object()
                let jwt = try entry.optionalObject("proof_types_supported")?.optionalObject("jwt")
                configurations[id] = Configuration(
                    id: id, format: try entry.string("format"), vct: try entry.optionalString("vct"),
                    doctype: try entry.optionalString("doctype"), scope: try entry.optionalString("scope"),
                    jwtProofAlgorithms: try jwt.map { reader throws(JSONReadError) in
                        try reader.optionalStringArray("proof_signing_alg_values_supported") ?? []
                    })
            }
            self.configurations = configurations
        }
    }
}

/// What the wallet needs from OAuth 2.0 Authorization Server Metadata (RFC 8414 §2).
struct AuthorizationServerMetadata {
    let issuer: String
    let tokenEndpoint: String
    let authorizationEndpoint: String?
    let parEndpoint: String?
    let requirePAR: Bool
    let dpopAlgorithms: [String]?
    let issParameterSupported: Bool
    let preAuthorizedAnonymousAccess: Bool
    let json: [String: JSONValue]

    /// RFC 8414 §3.3: the `issuer` value must be identical to the identifier used to fetch it.
    static func fetch(_ identifier: String, http: WalletHTTP) throws -> AuthorizationServerMetadata {
        var lastError: Error?
        // OpenID4VCI §12.3 allows OpenID Connect discovery for the AS as well; try RFC 8414 first.
        for suffix in ["oauth-authorization-server", "openid-configuration"] {
            do {
                let (url, json) = try WellKnown.fetch(identifier, suffix, http: http)
                let metadata = try AuthorizationServerMetadata(json: json, source: url)
                guard metadata.issuer == identifier else {
                    throw WalletError.malformed("\(url) names issuer \(metadata.issuer), not \(identifier)")
                }
                return metadata
            } catch {
                lastError = error
            }
        }
        throw lastError ?? WalletError.malformed("no authorization server metadata for \(identifier)")
    }

    init(json: [String: JSONValue], source: String) throws {
        self = try reading(source) { () throws(JSONReadError) in try AuthorizationServerMetadata(reading: json) }
    }

    private init(reading json: [String: JSONValue]) throws(JSONReadError) {
        self.json = json
        do {
            let reader = JSONReader(json)
            issuer = try reader.url("issuer")
            tokenEndpoint = try reader.url("token_endpoint")
            authorizationEndpoint = try reader.optionalURL("authorization_endpoint")
            parEndpoint = try reader.optionalURL("pushed_authorization_request_endpoint")
            requirePAR = try reader.optionalBool("require_pushed_authorization_requests") ?? false
            dpopAlgorithms = try reader.optionalStringArray("dpop_signing_alg_values_supported")
            issParameterSupported = try reader.optionalBool("authorization_response_iss_parameter_supported") ?? false
            preAuthorizedAnonymousAccess = try reader.optionalBool("pre-authorized_grant_anonymous_access_supported") ?? false
        }
    }
}
