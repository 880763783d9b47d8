import Cryptography
import JOSE
import JSON
import Store
import Support

/// What the admin API and the page ask for: a DCQL query (or a template), optionally the
/// client identifier prefix, the response mode and, for same-device flows, where the wallet
/// sends the person back (`redirect_uri` in the answer to its POST, OpenID4VP 1.0 §8.2).
public struct PresentationRequestOptions: Sendable {
    public var query: DCQLQuery
    public var clientIDPrefix: ClientIDPrefix?
    public var responseMode: ResponseMode?
    public var redirectURI: String?
    /// Same-device from `/verify/new`: the wallet sends the person back to the request's result
    /// page, whose URL is known once the request has its id.
    public var redirectToResultPage = false

    public init(query: DCQLQuery, clientIDPrefix: ClientIDPrefix? = nil, responseMode: ResponseMode? = nil, redirectURI: String? = nil) {
        self.query = query
        self.clientIDPrefix = clientIDPrefix
        self.responseMode = responseMode
        self.redirectURI = redirectURI
    }

    /// `{"dcql_query": {...}} | {"template": "<name>"}`, with `client_id_prefix`,
    /// `response_mode` and `redirect_uri` optional; unknown members refused.
    public static func parse(_ body: JSONValue) throws(VerificationError) -> PresentationRequestOptions {
        do {
            let reader = try JSONReader(body)
            try reader.rejectUnknown(allowed: ["dcql_query", "template", "client_id_prefix", "response_mode", "redirect_uri"])
            let query: DCQLQuery
            switch (reader["dcql_query"], try reader.optionalString("template")) {
            case (let value?, nil): query = try DCQLQuery.parse(value)
            case (nil, let name?):
                guard let template = DCQLTemplate(rawValue: name) else {
                    throw reader.invalid("template", "unknown template (known: \(DCQLTemplate.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                query = try DCQLQuery.parse(template.query)
            default: throw reader.invalid("dcql_query", "give either dcql_query or template")
            }
            var options = PresentationRequestOptions(query: query)
            if let v = try reader.optionalString("client_id_prefix") {
                guard let prefix = ClientIDPrefix(rawValue: v) else {
                    throw reader.invalid("client_id_prefix", "expected one of \(ClientIDPrefix.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                options.clientIDPrefix = prefix
            }
            if let v = try reader.optionalString("response_mode") {
                guard let mode = ResponseMode(rawValue: v) else {
                    throw reader.invalid("response_mode", "expected direct_post or direct_post.jwt")
                }
                options.responseMode = mode
            }
            options.redirectURI = try reader.optionalURL("redirect_uri")
            return options
        } catch {
            throw .invalidRequest("\(error)")
        }
    }
}

extension Verifier {
    /// The `typ` of request objects (OpenID4VP 1.0 §5, RFC 9101 §10.8).
    public static let requestObjectType = "oauth-authz-req+jwt"
    /// The audience of a request object for a wallet found without discovery (§5.8, static
    /// discovery: `https://self-issued.me/v2`).
    public static let staticAudience = "https://self-issued.me/v2"
    /// `encrypted_response_enc_values_supported` (§5.1, HAIP: A128GCM and A256GCM).
    public static let encryptionValues: [JWEContentEncryption] = [.A128GCM, .A256GCM]

    /// The client identifier under `prefix` (§5.9.3).
    public func clientID(_ prefix: ClientIDPrefix) -> String {
        switch prefix {
        case .x509Hash: "x509_hash:" + keys.certificateHash
        case .x509SANDNS: "x509_san_dns:" + keys.dnsName
        case .openidFederation: "openid_federation:" + entityID
        }
    }

    /// Stores a new pending request: fresh `id`, `state` and `nonce` (128 random bits each).
    public func createRequest(_ options: PresentationRequestOptions) throws(VerificationError) -> PresentationRequestRecord {
        let prefix = options.clientIDPrefix ?? configuration.clientIDPrefix
        let now = clock.now()
        if prefix == .openidFederation, currentTrustChain(now: now) == nil {
            throw .invalidRequest("openid_federation needs a trust chain from \(entityID) to a Trust Anchor hosted here; none resolves")
        }
        func random() -> String { Base64URL.encode(SecureRandom.bytes(16)) }
        let id = random()
        let record = PresentationRequestRecord(
            verifier: entityID, id: id, state: random(), nonce: random(), clientID: clientID(prefix),
            clientIDPrefix: prefix.rawValue, responseMode: (options.responseMode ?? configuration.responseMode).rawValue,
            dcqlQuery: String(decoding: options.query.json.bytes, as: UTF8.self), redirectURI: options.redirectToResultPage ? urls.resultPage(id) : options.redirectURI,
            createdAt: now, expiresAt: now + configuration.requestLifetime)
        do { try PresentationRequestRepository(database: database).insert(record) } catch { throw .store(error) }
        logger.info("presentation request \(record.id) created (\(record.clientIDPrefix), \(record.responseMode))")
        return record
    }

    /// `openid4vp://?client_id=...&request_uri=...` (§5.10: the request by reference).
    public func requestLink(_ record: PresentationRequestRecord) -> String {
        var out = Array("openid4vp://?client_id=".utf8)
        URLEncoding.encode(record.clientID, appendingTo: &out)
        out += "&request_uri=".utf8
        URLEncoding.encode(urls.request(record.id), appendingTo: &out)
        return String(decoding: out, as: UTF8.self)
    }

    public func request(id: String) throws(VerificationError) -> PresentationRequestRecord? {
        do { return try PresentationRequestRepository(database: database).find(verifier: entityID, id: id) } catch { throw .store(error) }
    }

    /// The signed request object of a pending, unexpired request (§5, RFC 9101), signed with
    /// the access certificate's key: `x5c` for the x509 prefixes, `kid` and `trust_chain` for
    /// `openid_federation`. `walletNonce` (§5.10, `request_uri_method=post`) is echoed.
    public func requestObject(id: String, walletNonce: String? = nil) throws(VerificationError) -> String {
        let now = clock.now()
        guard let record = try request(id: id), record.status == "pending", record.expiresAt > now else {
            throw .notFound("no pending presentation request \(id) (unknown, answered or expired)")
        }
        guard let prefix = ClientIDPrefix(rawValue: record.clientIDPrefix) else {
            throw .init(.serverError, "stored request has an unknown client_id_prefix")
        }
        let dcql: JSONValue
        do { dcql = try JSONValue.parse(Array(record.dcqlQuery.utf8)) } catch { throw .init(.serverError, "stored DCQL query does not parse") }
        var claims: [String: JSONValue] = [
            "client_id": .string(record.clientID),
            "aud": .string(Self.staticAudience),
            "response_type": "vp_token",
            "response_mode": .string(record.responseMode),
            "response_uri": .string(urls.response),
            "nonce": .string(record.nonce),
            "state": .string(record.state),
            "dcql_query": dcql,
            "iat": .int(now),
            "exp": .int(min(record.expiresAt, now + 600)),
        ]
        if let walletNonce { claims["wallet_nonce"] = .string(walletNonce) }
        var header: [String: JSONValue] = ["typ": .string(Self.requestObjectType)]
        switch prefix {
        case .x509Hash, .x509SANDNS:
            // §5.1: without federation metadata the wallet learns our keys and formats here.
            claims["client_metadata"] = .object(clientMetadata)
            header["x5c"] = JSONValue(keys.x5c)
        case .openidFederation:
            // §5.9.3 / OpenID Federation §12.1.1: the metadata comes from the trust chain, whose
            // openid_credential_verifier jwks holds the key named by kid.
            guard let chain = currentTrustChain(now: now) else {
                throw .init(.serverError, "no trust chain from \(entityID) to a Trust Anchor hosted here")
            }
            header["kid"] = .string(keys.signingJWK.kid ?? "")
            header["trust_chain"] = JSONValue(chain)
        }
        do {
            return try JWS.sign(header: header, payloadBytes: JSONValue.object(claims).bytes, key: keys.signingKey, algorithm: .ES256)
        } catch {
            throw .init(.serverError, "the request object cannot be signed", cause: "\(error)")
        }
    }
}
