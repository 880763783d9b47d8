import JSON

/// What the wallet needs from the Credential Issuer Metadata (OpenID4VCI 1.0 §12.2.4).
public struct IssuerMetadata {
    public struct Configuration {
        public let id: String
        public let format: String
        /// SD-JWT VC `vct` (Appendix A.3.2) or mdoc `doctype` (A.2.2).
        public let vct: String?
        public let doctype: String?
        public let scope: String?
        /// `proof_types_supported.jwt.proof_signing_alg_values_supported`; nil when no jwt proof is advertised.
        public let jwtProofAlgorithms: [String]?
    }

    public let credentialIssuer: String
    public let authorizationServers: [String]
    public let credentialEndpoint: String
    public let nonceEndpoint: String?
    public let deferredCredentialEndpoint: String?
    public let notificationEndpoint: String?
    public let batchSize: Int?
    public let configurations: [String: Configuration]
    public let json: [String: JSONValue]

    /// Fetches the metadata for `issuer` and checks that it names itself (§12.2.2: the
    /// `credential_issuer` value must be identical to the identifier it was fetched for).
    public static func fetch(_ issuer: String, http: WalletHTTP) throws -> IssuerMetadata {
        let (url, json) = try WellKnown.fetch(issuer, "openid-credential-issuer", http: http)
        let metadata = try IssuerMetadata(json: json, source: url)
        guard metadata.credentialIssuer == issuer else {
            throw WalletError.malformed("\(url) names credential_issuer \(metadata.credentialIssuer), not \(issuer)")
        }
        return metadata
    }

    public init(json: [String: JSONValue], source: String) throws {
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
public struct AuthorizationServerMetadata {
    public let issuer: String
    public let tokenEndpoint: String
    public let authorizationEndpoint: String?
    public let parEndpoint: String?
    public let requirePAR: Bool
    public let dpopAlgorithms: [String]?
    public let issParameterSupported: Bool
    public let preAuthorizedAnonymousAccess: Bool
    public let json: [String: JSONValue]

    /// RFC 8414 §3.3: the `issuer` value must be identical to the identifier used to fetch it.
    public static func fetch(_ identifier: String, http: WalletHTTP) throws -> AuthorizationServerMetadata {
        var failures: [String] = []
        // OpenID4VCI §12.3 allows OpenID Connect discovery for the AS as well; try RFC 8414 first.
        for suffix in ["oauth-authorization-server", "openid-configuration"] {
            guard let (url, json) = try WellKnown.fetch(identifier, suffix, http: http, failures: &failures) else { continue }
            do {
                let metadata = try AuthorizationServerMetadata(json: json, source: url)
                guard metadata.issuer == identifier else { throw WalletError.malformed("it names issuer \(metadata.issuer), not \(identifier)") }
                return metadata
            } catch {
                // The other placement may still hold valid metadata.
                failures.append("\(url) (\(error))")
            }
        }
        throw WalletError.malformed("no authorization server metadata for \(identifier); tried \(failures.joined(separator: "; "))")
    }

    public init(json: [String: JSONValue], source: String) throws {
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
