import Foundation
import JOSE
import JSON
import Support

/// The issuer and its authorization server as discovered from an offer: fetched once, shared by
/// every session (the load client's threads included).
public struct IssuerContext: @unchecked Sendable {
    public let issuer: IssuerMetadata
    public let authorizationServer: AuthorizationServerMetadata

    public init(issuer: IssuerMetadata, authorizationServer: AuthorizationServerMetadata) {
        self.issuer = issuer
        self.authorizationServer = authorizationServer
    }

    /// §4.1.1 and §12.2.4: the grant's `authorization_server` when the offer names one (it must be
    /// listed in the metadata), else the first listed, else the issuer itself.
    public static func discover(offer: CredentialOffer, http: WalletHTTP, grantServer: String?) throws -> IssuerContext {
        let issuer = try IssuerMetadata.fetch(offer.credentialIssuer, http: http)
        let server: String
        if let grantServer {
            guard issuer.authorizationServers.contains(grantServer) else {
                throw WalletError.malformed("the offer's authorization_server \(grantServer) is not in the issuer's authorization_servers")
            }
            server = grantServer
        } else {
            server = issuer.authorizationServers.first ?? issuer.credentialIssuer
        }
        return IssuerContext(issuer: issuer, authorizationServer: try AuthorizationServerMetadata.fetch(server, http: http))
    }
}

/// The token endpoint's answer (RFC 6749 §5.1, OpenID4VCI §6.2).
public struct TokenResponse {
    public let accessToken: String
    public let tokenType: String
    /// credential_configuration_id → credential_identifiers from `authorization_details` (§6.2).
    public let credentialIdentifiers: [String: [String]]
    /// The members read from the response (`members`), not `credential_previews` and the like.
    public let json: [String: JSONValue]

    public static let members = ResponseJSON("access_token", "token_type", "authorization_details")
    /// `members` and `credential_previews`, for a session that compares recovery codes (`readsPreviews`).
    public static let membersWithPreviews = ResponseJSON("access_token", "token_type", "authorization_details", "credential_previews")
}

/// What the credential (or deferred) endpoint finally delivered.
public struct CredentialDelivery {
    /// Each `credentials[].credential`: a string for SD-JWT VC and mdoc.
    public let credentials: [JSONValue]
    public let notificationID: String?
    /// True when the issuer answered 202 first and the credential came from the deferred endpoint.
    public let deferred: Bool
}

/// One wallet talking to one issuer: DPoP state and the protocol steps (OpenID4VCI 1.0 §6–§11).
/// Not thread-safe: the load client runs one per thread.
public final class WalletSession {
    public enum Server { case authorization, resource }

    public let context: IssuerContext
    public let http: WalletHTTP
    /// The DPoP key; nil sends Bearer tokens until a server insists on DPoP.
    private(set) var dpopKey: HolderKey?
    /// RFC 9449 §8 and §9: the AS and the RS hand out their nonces separately.
    private var nonces: [Server: String] = [:]
    /// The client_id, when the wallet identifies itself (never in the anonymous pre-authorized flow).
    public var clientID: String?
    /// Logs each exchange to stderr (`--verbose`).
    public var trace = false
    /// Attestation-based client authentication (draft-ietf-oauth-attestation-based-client-auth
    /// §5): given the AS issuer (the PoP's `aud`), the `OAuth-Client-Attestation` and
    /// `OAuth-Client-Attestation-PoP` header lines, sent at PAR and the token endpoint.
    public var clientAttestation: ((String) throws -> [String])?
    /// OpenID4VCI 1.0 Appendix D: a key attestation of the proof keys carrying the issuer's
    /// c_nonce; when set, `jwt` proofs carry it in their `key_attestation` header.
    public var keyAttester: (([HolderKey], String?) throws -> String)?
    /// Keep the token response's `credential_previews` in `TokenResponse.json` (the recovery
    /// flows compare the previewed recovery code); other flows skip building them.
    public var readsPreviews = false
    /// Whether the current access token is DPoP-bound. An AS may answer a DPoP-proofed token
    /// request with a Bearer token (RFC 9449 §5), and the client must then use the token as the
    /// type it got: the resource server is sent `Authorization: Bearer` and no DPoP proof.
    private var tokenIsDPoPBound = true
    /// What the peer did that the specs allow or that is a peer's bug the wallet tolerates, each
    /// said once (the CLI prints them).
    public private(set) var warnings: [String] = []

    func warn(_ text: String) {
        if !warnings.contains(text) { warnings.append(text) }
    }

    public init(context: IssuerContext, http: WalletHTTP, dpop: Bool) throws {
        self.context = context
        self.http = http
        dpopKey = dpop ? try HolderKey() : nil
    }

    /// With a DPoP key from the caller (the load client's pre-generated pool), or none.
    public init(context: IssuerContext, http: WalletHTTP, dpopKey: HolderKey?) {
        self.context = context
        self.http = http
        self.dpopKey = dpopKey
    }

    public var usesDPoP: Bool { dpopKey != nil }

    // MARK: - sending with DPoP

    /// Sends with a fresh DPoP proof (when DPoP is on) and, on `use_dpop_nonce`, retries once with
    /// the nonce the server just gave (RFC 9449 §8.1 at the AS, §9 at the RS).
    public func exchange(_ method: String, _ url: String, server: Server, accessToken: String? = nil,
                  headers: [String], body: [UInt8]?) throws -> WalletHTTP.Reply {
        var reply: WalletHTTP.Reply?
        // A Bearer token goes without proofs to the resource server (RFC 9449 §5 and §7.1).
        let key = server == .resource && !tokenIsDPoPBound ? nil : dpopKey
        for attempt in 0..<2 {
            var all = headers
            if let key {
                all.append("DPoP: " + (try WalletProofs.dpop(key: key, method: method, url: url, nonce: nonces[server], accessToken: accessToken)))
            }
            if let accessToken { all.append("Authorization: \(key == nil ? "Bearer" : "DPoP") \(accessToken)") }
            let answer = try http.send(method, url, headers: all, body: body)
            if trace { FileHandle.standardError.write(Data("\(method) \(url) → \(answer.status)\n".utf8)) }
            if let nonce = answer.header("DPoP-Nonce") { nonces[server] = nonce }
            reply = answer
            if attempt == 0, key != nil, Self.asksForNonce(answer), answer.header("DPoP-Nonce") != nil { continue }
            break
        }
        return reply!
    }

    public static func asksForNonce(_ reply: WalletHTTP.Reply) -> Bool {
        if reply.status == 400 { return reply.json?["error"]?.stringValue == "use_dpop_nonce" }
        return reply.status == 401 && (reply.header("WWW-Authenticate") ?? "").contains("use_dpop_nonce")
    }

    private func form(_ url: String, _ pairs: [(String, String)], server: Server) throws -> WalletHTTP.Reply {
        let body = Parameters(pairs: pairs.map { (name: $0.0, value: $0.1) }).encoded
        var headers = ["Content-Type: application/x-www-form-urlencoded", "Accept: application/json"]
        if server == .authorization, let clientAttestation { headers += try clientAttestation(context.authorizationServer.issuer) }
        return try exchange("POST", url, server: server, headers: headers, body: Array(body.utf8))
    }

    // MARK: - token endpoint

    /// §6.1 with the pre-authorized code grant; `txCode` when the offer asks for one.
    public func preAuthorizedToken(code: String, txCode: String?) throws -> TokenResponse {
        var pairs = [("grant_type", CredentialOffer.preAuthorizedGrant), ("pre-authorized_code", code)]
        if let txCode { pairs.append(("tx_code", txCode)) }
        if let clientID { pairs.append(("client_id", clientID)) }
        return try token(pairs)
    }

    /// §6.1 with the authorization code grant (RFC 6749 §4.1.3, RFC 7636 §4.5).
    public func authorizationCodeToken(code: String, verifier: String, redirectURI: String) throws -> TokenResponse {
        var pairs = [("grant_type", "authorization_code"), ("code", code), ("code_verifier", verifier), ("redirect_uri", redirectURI)]
        if let clientID { pairs.append(("client_id", clientID)) }
        return try token(pairs)
    }

    private func token(_ pairs: [(String, String)]) throws -> TokenResponse {
        let endpoint = context.authorizationServer.tokenEndpoint
        var reply = try form(endpoint, pairs, server: .authorization)
        // A server that insists on DPoP says so with an error; switch it on once and retry.
        if reply.status != 200, dpopKey == nil, context.authorizationServer.dpopAlgorithms != nil,
           let error = reply.json?["error"]?.stringValue, ["use_dpop_nonce", "invalid_dpop_proof"].contains(error) {
            dpopKey = try HolderKey()
            reply = try form(endpoint, pairs, server: .authorization)
        }
        guard reply.status == 200, let json = reply.json(readsPreviews ? TokenResponse.membersWithPreviews : TokenResponse.members) else {
            throw WalletError.server(step: "token endpoint", status: reply.status, body: reply.text)
        }
        let (accessToken, tokenType, identifiers, typeless) = try reading("token response") { () throws(JSONReadError) in
            let reader = JSONReader(json)
            let accessToken = try reader.nonEmptyString("access_token")
            let tokenType = try reader.string("token_type")
            var identifiers: [String: [String]] = [:]
            var typeless = false
            for field in try reader.optionalArray("authorization_details") ?? [] {
                let detail = try field.object()
                // RFC 9396 §2 makes `type` required; an entry without it that names a
                // configuration can only mean openid_credential (OpenID4VCI §6.2).
                let type = try detail.optionalString("type")
                if type == nil { typeless = true }
                guard type ?? "openid_credential" == "openid_credential",
                      let id = try detail.optionalString("credential_configuration_id") else { continue }
                identifiers[id, default: []] += try detail.optionalStringArray("credential_identifiers") ?? []
            }
            return (accessToken, tokenType, identifiers, typeless)
        }
        if typeless {
            warn("the token response has authorization_details without \"type\" (RFC 9396 §2 requires it); read as openid_credential")
        }
        switch tokenType.lowercased() {
        case "dpop" where dpopKey != nil:
            tokenIsDPoPBound = true
        case "bearer" where dpopKey != nil:
            // RFC 9449 §5: the AS may issue a Bearer token to a DPoP client; use it as one.
            tokenIsDPoPBound = false
            warn("the authorization server issued a Bearer token although the request carried a DPoP proof; "
                 + "using it as a Bearer token (RFC 9449 §5)")
        case "bearer":
            tokenIsDPoPBound = false
        default:
            throw WalletError.malformed("token_type is \(tokenType), expected \(dpopKey == nil ? "Bearer" : "DPoP or Bearer")")
        }
        return TokenResponse(accessToken: accessToken, tokenType: tokenType, credentialIdentifiers: identifiers, json: json)
    }

    // MARK: - authorization endpoint

    public struct AuthorizationRequest {
        public let url: String
        public let state: String
        public let verifier: String
        public let redirectURI: String
    }

    /// RFC 6749 §4.1.1 with PKCE S256 (RFC 7636), `authorization_details` of type
    /// `openid_credential` (§5.1.1), `issuer_state` from the offer (§5.1.3) and `login_hint`;
    /// pushed first (RFC 9126) when the AS has a PAR endpoint.
    public func authorizationRequest(configurationIDs: [String], redirectURI: String, issuerState: String?,
                              loginHint: String?) throws -> AuthorizationRequest {
        guard let clientID else { throw WalletError.usage("the authorization code flow needs a client_id") }
        let server = context.authorizationServer
        guard let authorize = server.authorizationEndpoint else {
            throw WalletError.malformed("the authorization server has no authorization_endpoint")
        }
        let (verifier, challenge) = WalletProofs.pkce()
        let state = WalletProofs.randomToken()
        let details = JSONValue.array(configurationIDs.map {
            ["type": "openid_credential", "credential_configuration_id": .string($0)]
        })
        var pairs = [
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI),
            ("code_challenge", challenge), ("code_challenge_method", "S256"), ("state", state),
            ("authorization_details", details.serialized()),
        ]
        if let issuerState { pairs.append(("issuer_state", issuerState)) }
        if let loginHint { pairs.append(("login_hint", loginHint)) }
        guard let par = server.parEndpoint else {
            if server.requirePAR { throw WalletError.malformed("the AS requires PAR but advertises no endpoint") }
            return AuthorizationRequest(url: URLEncoding.appendingQuery(pairs, to: authorize), state: state,
                                        verifier: verifier, redirectURI: redirectURI)
        }
        let reply = try form(par, pairs, server: .authorization)
        guard reply.status == 201 || reply.status == 200, let json = reply.json, let requestURI = json["request_uri"]?.stringValue else {
            throw WalletError.server(step: "pushed authorization request", status: reply.status, body: reply.text)
        }
        var query = [("client_id", clientID), ("request_uri", requestURI)]
        // Repeated outside the pushed request for servers that read the hint at the front channel.
        if let loginHint { query.append(("login_hint", loginHint)) }
        return AuthorizationRequest(url: URLEncoding.appendingQuery(query, to: authorize), state: state,
                                    verifier: verifier, redirectURI: redirectURI)
    }

    /// Follows the front channel without a browser: GET the authorize URL, and if the AS redirects
    /// straight to the redirect_uri (a login_hint a mock AS honours), the code is there.
    /// Returns nil when a person has to log in.
    public func tryAuthorizeWithoutBrowser(_ request: AuthorizationRequest) throws -> String? {
        let reply = try http.send("GET", request.url, headers: ["Accept: text/html"])
        guard (300..<400).contains(reply.status), let location = reply.header("Location"),
              location.hasPrefix(request.redirectURI) else { return nil }
        return location
    }

    /// RFC 6749 §4.1.2 and RFC 9207: reads `code` from the redirect, checks `state`, and `iss`
    /// against the AS (required when the AS advertises it).
    public func code(fromRedirect location: String, request: AuthorizationRequest) throws -> String {
        let afterQuery = location.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init)
            ?? location.split(separator: "#", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
        let parameters = Parameters(encoded: afterQuery.split(separator: "#").first.map(String.init) ?? "")
        if let error = parameters.all("error").first {
            throw WalletError.server(step: "authorization response", status: 302,
                                     body: "error=\(error) \(parameters.all("error_description").first ?? "")")
        }
        guard parameters.all("state").first == request.state else {
            throw WalletError.verification("the authorization response's state does not match the request")
        }
        let iss = parameters.all("iss").first
        if let iss, iss != context.authorizationServer.issuer {
            throw WalletError.verification("authorization response iss \(iss) is not the AS \(context.authorizationServer.issuer) (RFC 9207)")
        }
        if iss == nil, context.authorizationServer.issParameterSupported {
            throw WalletError.verification("authorization response lacks iss although the AS advertises it (RFC 9207 §2.4)")
        }
        guard let code = parameters.all("code").first, !code.isEmpty else {
            throw WalletError.malformed("the authorization response carries no code")
        }
        return code
    }
}
