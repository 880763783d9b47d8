import Cryptography
import Foundation
import JOSE
import JSON
import Support

/// A P-256 key the wallet holds, with its public JWK in the minimal form (kty, crv, x, y) that
/// proof headers carry: no kid or use, nothing a verifier would have to interpret.
struct HolderKey: @unchecked Sendable {
    let privateKey: PrivateKey
    let publicJWK: [String: JSONValue]

    init() throws {
        privateKey = try PrivateKey(generatingFor: .ES256)
        guard case .ec(let curve, let x, let y) = privateKey.publicKey.components else {
            throw WalletError.usage("P-256 key generation gave a non-EC key")
        }
        publicJWK = ["kty": "EC", "crv": .string(curve), "x": .string(Base64URL.encode(x)), "y": .string(Base64URL.encode(y))]
    }

    /// A compact JWS with `jwk` in the header (the proof-of-possession shape shared by DPoP and
    /// the OpenID4VCI key proof).
    func signedJWT(type: String, claims: [String: JSONValue]) throws -> String {
        let header: [String: JSONValue] = ["typ": .string(type), "jwk": .object(publicJWK)]
        return try JWS.sign(header: header, payloadBytes: JSONValue.object(claims).bytes, key: privateKey, algorithm: .ES256)
    }
}

enum WalletProofs {
    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    static func randomToken(_ bytes: Int = 16) -> String { Base64URL.encode(SecureRandom.bytes(bytes)) }

    /// RFC 9449 §4.2: a DPoP proof for one request. `htu` is the target URI without query and
    /// fragment; `ath` (§4.3) binds the proof to the access token at a resource server.
    static func dpop(key: HolderKey, method: String, url: String, nonce: String?, accessToken: String?) throws -> String {
        var claims: [String: JSONValue] = [
            "jti": .string(randomToken()), "htm": .string(method), "htu": .string(htu(url)), "iat": .int(now()),
        ]
        if let nonce { claims["nonce"] = .string(nonce) }
        if let accessToken { claims["ath"] = .string(Base64URL.encode(Digest.sha256(Array(accessToken.utf8)))) }
        return try key.signedJWT(type: "dpop+jwt", claims: claims)
    }

    static func htu(_ url: String) -> String {
        // On the UTF-8 view: a Character search costs the load client tens of thousands of
        // instructions per proof. "?" and "#" are ASCII, so the cut is a character boundary.
        guard let cut = url.utf8.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) else { return url }
        return String(url[..<cut])
    }

    /// OpenID4VCI 1.0 Appendix F.1: the `jwt` key proof. `iss` is the client_id, omitted in the
    /// anonymous pre-authorized flow; `nonce` is the c_nonce when the issuer has a nonce endpoint.
    static func keyProof(key: HolderKey, audience: String, nonce: String?, clientID: String?) throws -> String {
        var claims: [String: JSONValue] = ["aud": .string(audience), "iat": .int(now())]
        if let nonce { claims["nonce"] = .string(nonce) }
        if let clientID { claims["iss"] = .string(clientID) }
        return try key.signedJWT(type: "openid4vci-proof+jwt", claims: claims)
    }

    /// RFC 7636 §4.1–4.2: a 43-character verifier and its S256 challenge.
    static func pkce() -> (verifier: String, challenge: String) {
        let verifier = randomToken(32)
        return (verifier, Base64URL.encode(Digest.sha256(Array(verifier.utf8))))
    }
}
