import CBOR
import Cryptography
import Foundation
import JOSE
import JSON
import MDoc
import SDJWT
import Support

/// `trustbed wallet present`: answers an OpenID4VP 1.0 request from the test wallet file. The
/// steps are separate so the verifier benchmark runs exactly this code: fetch and verify the
/// request object, select and sign, post.
public struct WalletPresenter {
    public let http: WalletHTTP
    /// Anchors the x5c of the x509 client identifier prefixes (`--verifier-ca`).
    public var verifierRoots: [Certificate]?
    /// Validates an `openid_federation` request's `trust_chain` and answers the verifier's
    /// resolved metadata (the command supplies it with the Federation library).
    public var federation: ((_ trustChain: [String], _ entityID: String) throws -> [String: JSONValue])?
    public var log: ((String) -> Void)?

    public init(http: WalletHTTP) { self.http = http }

    /// The verifier's answer to the posted response (§8.2).
    public struct Outcome {
        public let status: Int
        public let body: JSONValue
        public var redirectURI: String? { body["redirect_uri"]?.stringValue }
    }

    /// §5.10: GET `request_uri` (or POST, `request_uri_method=post`) and verify the request object.
    public func fetchRequest(link: String) throws -> PresentationRequest {
        let (clientID, requestURI, method) = try PresentationRequest.link(link)
        log?("request: client_id \(clientID), request_uri \(requestURI)" + (method.map { ", request_uri_method \($0)" } ?? ""))
        let reply = method == "post"
            ? try http.postForm(requestURI, [], headers: ["Accept: application/oauth-authz-req+jwt"])
            : try http.get(requestURI, accept: "application/oauth-authz-req+jwt")
        guard reply.status == 200 else { throw WalletError.server(step: "request_uri", status: reply.status, body: reply.text) }
        let request = try PresentationRequest.verify(reply.text.trimmingCharacters(in: .whitespacesAndNewlines), linkClientID: clientID,
                                                     verifierRoots: verifierRoots, federation: federation)
        for check in request.checks { log?("  check: \(check)") }
        log?("  response_mode \(request.responseMode), response_uri \(request.responseURI), nonce \(request.nonce)")
        log?("  dcql_query: \(request.dcqlQuery.serialized())")
        return request
    }

    /// The form to post: `vp_token` and `state` (direct_post), or one `response` JWE of them
    /// (direct_post.jwt, §8.3) encrypted to the verifier's key.
    public func answer(_ request: PresentationRequest, wallet: TestWalletFile, now: Int64 = WalletProofs.now()) throws -> [(String, String)] {
        try answer(request, credentials: try WalletCredentials(wallet), now: now)
    }

    /// `answer` from credentials decoded beforehand (the benchmark decodes them once).
    public func answer(_ request: PresentationRequest, credentials: WalletCredentials, now: Int64 = WalletProofs.now()) throws -> [(String, String)] {
        let selected = try PresentationSelection.select(request.dcqlQuery, from: credentials)
        var encryption: (jwk: JWK, encryption: JWEContentEncryption)?
        if request.responseMode == "direct_post.jwt" { encryption = try request.encryptionKey() }
        var vpToken: [String: JSONValue] = [:]
        for credential in selected {
            log?("query \(credential.queryID): disclosing \(credential.disclosed.joined(separator: ", "))")
            switch credential.content {
            case .sdJWT(let presentation, let key):
                // RFC 9901 §4.3, OpenID4VP 1.0 B.3.6: aud = client_id, the request's nonce, sd_hash.
                let bound = try presentation.addingKeyBinding(key: key.privateKey, algorithm: .ES256, audience: request.clientID,
                                                              nonce: request.nonce, issuedAt: now)
                log?("  KB-JWT: aud \(request.clientID), nonce \(request.nonce), iat \(now), sd_hash over \(presentation.disclosures.count) disclosures")
                vpToken[credential.queryID] = [.string(bound.serialized)]
            case .mdoc(let stored, let elements):
                // B.2.6.1: the handover binds client_id, nonce, the encryption key's thumbprint and response_uri.
                let thumbprint = encryption.flatMap { Base64URL.decode($0.jwk.thumbprint()) }
                let transcript = SessionTranscript.openID4VP(clientID: request.clientID, nonce: request.nonce, jwkThumbprint: thumbprint,
                                                             responseURI: request.responseURI)
                let response = try stored.present(elements: elements, sessionTranscript: transcript)
                log?("  DeviceResponse: docType \(stored.docType), device signature over the OpenID4VP SessionTranscript"
                     + (thumbprint == nil ? "" : " (with the encryption key's thumbprint)"))
                vpToken[credential.queryID] = [.string(response.base64URL)]
            }
        }
        if let encryption {
            var payload: [String: JSONValue] = ["vp_token": .object(vpToken)]
            if let state = request.state { payload["state"] = .string(state) }
            let jwe = try JWE.encrypt(JSONValue.object(payload).bytes, to: encryption.jwk, encryption: encryption.encryption)
            log?("  direct_post.jwt: ECDH-ES + \(encryption.encryption.rawValue) to kid \(encryption.jwk.kid ?? "(none)")")
            return [("response", jwe)]
        }
        var form = [("vp_token", JSONValue.object(vpToken).serialized())]
        if let state = request.state { form.append(("state", state)) }
        return form
    }

    /// §8.2: POST the form to `response_uri`; a non-200 answer is the verifier's error (§8.5).
    public func post(_ form: [(String, String)], to request: PresentationRequest) throws -> Outcome {
        let reply = try http.postForm(request.responseURI, form)
        let body = (try? JSONValue.parse(reply.body)) ?? .object([:])
        guard reply.status == 200 else { throw WalletError.server(step: "response_uri", status: reply.status, body: reply.text) }
        return Outcome(status: reply.status, body: body)
    }

    /// The three steps.
    public func present(link: String, wallet: TestWalletFile) throws -> Outcome {
        let request = try fetchRequest(link: link)
        let form = try answer(request, wallet: wallet)
        let outcome = try post(form, to: request)
        log?("verifier: HTTP \(outcome.status) \(outcome.body.serialized())")
        return outcome
    }
}
