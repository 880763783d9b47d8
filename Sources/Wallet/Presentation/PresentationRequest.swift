import Cryptography
import Foundation
import JOSE
import JSON
import Support

/// An OpenID4VP 1.0 authorization request as the wallet acts on it: the `openid4vp://` link
/// followed to its signed request object (§5.10, RFC 9101), whose signature was checked by the
/// rules of its client identifier prefix (§5.9.3) before anything in it is believed.
public struct PresentationRequest {
    public let clientID: String
    public let prefix: String
    public let responseType: String
    public let responseMode: String
    public let responseURI: String
    public let nonce: String
    public let state: String?
    public let dcqlQuery: JSONValue
    /// `client_metadata` of the request object, or (openid_federation) the verifier's resolved
    /// `openid_credential_verifier` metadata: its `jwks` holds the response encryption key.
    public let clientMetadata: [String: JSONValue]
    /// What was checked, for `--verbose`.
    public let checks: [String]

    /// The request object's media type and `typ` (RFC 9101 §10.2, §10.8).
    public static let requestObjectType = "oauth-authz-req+jwt"
    public static let allowedAlgorithms: Set<SignatureAlgorithm> = [.ES256, .ES384, .ES512, .EdDSA, .PS256, .RS256]

    /// `openid4vp://?client_id=...&request_uri=...`: the two parameters (§5.10). Passing the
    /// request by value is not supported: every prefix this wallet accepts needs a signature.
    public static func link(_ text: String) throws -> (clientID: String, requestURI: String, method: String?) {
        guard let components = URLComponents(string: text.trimmingCharacters(in: .whitespacesAndNewlines)),
              let items = components.queryItems else {
            throw WalletError.usage("not an openid4vp link (expected openid4vp://?client_id=...&request_uri=...)")
        }
        func one(_ name: String) throws -> String? {
            let values = items.filter { $0.name == name }.compactMap(\.value)
            guard values.count <= 1 else { throw WalletError.usage("the link repeats \(name)") }
            return values.first
        }
        guard let clientID = try one("client_id"), !clientID.isEmpty else { throw WalletError.usage("the link has no client_id (§5.10)") }
        guard let requestURI = try one("request_uri"), !requestURI.isEmpty else {
            if try one("request") != nil || one("dcql_query") != nil {
                throw WalletError.usage("requests by value are not supported: this wallet needs a signed request object (request_uri)")
            }
            throw WalletError.usage("the link has no request_uri (§5.10)")
        }
        return (clientID, requestURI, try one("request_uri_method"))
    }

    /// Verifies a request object (compact JWS) for the link's `client_id`. `federation` validates
    /// the `trust_chain` header of an `openid_federation` request and answers the verifier's
    /// resolved metadata; `verifierRoots`, when given, anchor the x5c of the x509 prefixes.
    public static func verify(
        _ compact: String, linkClientID: String, verifierRoots: [Certificate]?,
        federation: ((_ trustChain: [String], _ entityID: String) throws -> [String: JSONValue])?,
        now: Int64 = WalletProofs.now()
    ) throws -> PresentationRequest {
        let jws: JWS
        let claims: [String: JSONValue]
        do { (jws, claims) = try JWS.parseClaims(compact) } catch { throw WalletError.malformed("the request object is not a JWS: \(error)") }
        guard claims["client_id"]?.stringValue == linkClientID else {
            throw WalletError.verification("the request object's client_id is not the link's \(linkClientID) (§5.10)")
        }
        guard let colon = linkClientID.firstIndex(of: ":") else {
            throw WalletError.verification("client_id \(linkClientID) has no prefix this wallet accepts (x509_hash, x509_san_dns, openid_federation)")
        }
        let prefix = String(linkClientID[..<colon])
        let value = String(linkClientID[linkClientID.index(after: colon)...])
        var checks: [String] = []
        var metadata = claims["client_metadata"]?.objectValue
        let keys: JWKSet
        switch prefix {
        case "x509_hash", "x509_san_dns":
            guard let x5c = jws.header["x5c"]?.stringArray, !x5c.isEmpty else {
                throw WalletError.verification("\(prefix): the request object has no x5c header (§5.9.3)")
            }
            let chain: [Certificate]
            do { chain = try Certificate.chain(x5c: x5c) } catch { throw WalletError.verification("x5c: \(error)") }
            if prefix == "x509_hash" {
                // §5.9.3: base64url SHA-256 of the DER leaf certificate.
                let hash = Base64URL.encode(Digest.sha256(chain[0].der))
                guard hash == value else { throw WalletError.verification("x509_hash: the x5c leaf hashes to \(hash), not \(value)") }
                checks.append("x509_hash: SHA-256 of the x5c leaf certificate matches the client_id")
            } else {
                // §5.9.3: the DNS name is a dNSName subjectAltName of the leaf.
                guard (chain[0].subjectAlternativeNames ?? []).contains(.dns(value)) else {
                    throw WalletError.verification("x509_san_dns: the x5c leaf has no dNSName \(value)")
                }
                checks.append("x509_san_dns: the x5c leaf names \(value) in its subjectAltName")
            }
            if let verifierRoots {
                do {
                    try Certificate.verifyChain(leaf: chain[0], intermediates: Array(chain.dropFirst()), roots: verifierRoots, at: now)
                } catch { throw WalletError.verification("x5c does not chain to a trusted verifier root: \(error)") }
                checks.append("x5c chains to a trusted verifier root (--verifier-ca)")
            } else {
                checks.append("x5c chain not anchored (no --verifier-ca given)")
            }
            do { keys = JWKSet(keys: [JWK(publicKey: try chain[0].publicKey(), use: nil)]) } catch {
                throw WalletError.verification("x5c leaf key: \(error)")
            }
        case "openid_federation":
            guard let federation else { throw WalletError.usage("openid_federation: name a Trust Anchor (--trust-anchor) to check the verifier's trust chain") }
            guard let chain = jws.header["trust_chain"]?.stringArray, !chain.isEmpty else {
                throw WalletError.verification("openid_federation: the request object has no trust_chain header")
            }
            let resolved = try federation(chain, value)
            guard let verifier = resolved["openid_credential_verifier"]?.objectValue, let jwks = verifier["jwks"] else {
                throw WalletError.verification("openid_federation: \(value) has no openid_credential_verifier jwks in its resolved metadata")
            }
            do { keys = try JWKSet(json: jwks) } catch { throw WalletError.verification("openid_credential_verifier jwks: \(error)") }
            // OpenID Federation §12.1.1: the metadata comes from the trust chain, not the request.
            metadata = verifier
            checks.append("openid_federation: trust_chain of \(chain.count) statements from \(value) validated to the Trust Anchor")
        default:
            throw WalletError.verification("client_id prefix \(prefix) is not supported (x509_hash, x509_san_dns, openid_federation)")
        }
        do {
            try jws.verify(keys: keys, allowList: allowedAlgorithms, expectedType: requestObjectType, requireKeyID: prefix == "openid_federation")
        } catch { throw WalletError.verification("request object signature: \(error)") }
        checks.append("request object: typ \(requestObjectType), \(jws.algorithm ?? "") signature verifies")

        if let exp = claims["exp"]?.intValue, exp + 60 < now { throw WalletError.verification("the request object expired") }
        guard let responseType = claims["response_type"]?.stringValue, responseType == "vp_token" else {
            throw WalletError.verification("response_type must be vp_token (§5.2)")
        }
        let mode = claims["response_mode"]?.stringValue ?? "fragment"
        guard mode == "direct_post" || mode == "direct_post.jwt" else {
            throw WalletError.verification("response_mode \(mode) is not supported (direct_post, direct_post.jwt)")
        }
        guard let responseURI = claims["response_uri"]?.stringValue, !responseURI.isEmpty else {
            throw WalletError.verification("\(mode) needs a response_uri (§8.2)")
        }
        guard let nonce = claims["nonce"]?.stringValue, !nonce.isEmpty else { throw WalletError.verification("nonce is missing (§5.2)") }
        guard let dcql = claims["dcql_query"], dcql.objectValue != nil else {
            throw WalletError.verification("dcql_query is missing: this wallet answers DCQL queries only (§6)")
        }
        if prefix == "x509_san_dns", let host = URL(string: responseURI)?.host, host != value {
            // §5.9.3: without a redirect_uri the response_uri's host must be the DNS name.
            throw WalletError.verification("x509_san_dns: response_uri host \(host) is not \(value)")
        }
        return PresentationRequest(
            clientID: linkClientID, prefix: prefix, responseType: responseType, responseMode: mode, responseURI: responseURI,
            nonce: nonce, state: claims["state"]?.stringValue, dcqlQuery: dcql, clientMetadata: metadata ?? [:], checks: checks)
    }

    /// The verifier's response encryption key (§8.3: a key of `client_metadata.jwks` for
    /// ECDH-ES, `use` enc when it says) and the content encryption it accepts (A128GCM when it
    /// does not say, §5.1).
    public func encryptionKey() throws -> (jwk: JWK, encryption: JWEContentEncryption) {
        let keys = (clientMetadata["jwks"]?["keys"]?.arrayValue ?? []).compactMap { $0.objectValue }
        guard let object = keys.first(where: { ($0["use"]?.stringValue ?? "enc") == "enc" && $0["kty"]?.stringValue == "EC"
                                               && ($0["alg"]?.stringValue ?? "ECDH-ES") == "ECDH-ES" }) else {
            throw WalletError.verification("direct_post.jwt: client_metadata.jwks has no ECDH-ES encryption key (§8.3)")
        }
        let jwk: JWK
        do { jwk = try JWK(json: object) } catch { throw WalletError.verification("the encryption key: \(error)") }
        let offered = clientMetadata["encrypted_response_enc_values_supported"]?.stringArray ?? ["A128GCM"]
        guard let encryption = offered.lazy.compactMap(JWEContentEncryption.init(rawValue:)).first else {
            throw WalletError.verification("none of encrypted_response_enc_values_supported \(offered) is supported")
        }
        return (jwk, encryption)
    }
}
