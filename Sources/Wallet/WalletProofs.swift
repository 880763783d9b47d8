import Cryptography
import Foundation
import JOSE
import JSON
import Support

/// A P-256 key the wallet holds, with its public JWK in the minimal form (kty, crv, x, y) that
/// proof headers carry: no kid or use, nothing a verifier would have to interpret.
public struct HolderKey: @unchecked Sendable {
    let privateKey: PrivateKey
    let publicJWK: [String: JSONValue]
    /// The base64url JOSE headers of its key proofs and DPoP proofs, which never change: made
    /// once per key instead of as a dictionary serialized and encoded per proof.
    public let keyProofHeader: [UInt8]
    public let dpopHeader: [UInt8]

    public static let keyProofType = "openid4vci-proof+jwt"
    public static let dpopType = "dpop+jwt"

    public init() throws {
        try self.init(privateKey: try PrivateKey(generatingFor: .ES256))
    }

    /// A key the wallet kept: the test wallet file's private JWK (kty EC, crv P-256, x, y, d).
    public init(privateJWK jwk: [String: JSONValue]) throws {
        guard jwk["kty"]?.stringValue == "EC", jwk["crv"]?.stringValue == "P-256",
              let d = jwk["d"]?.stringValue.flatMap(Base64URL.decode), let x = jwk["x"]?.stringValue.flatMap(Base64URL.decode),
              let y = jwk["y"]?.stringValue.flatMap(Base64URL.decode) else {
            throw WalletError.usage("not a private EC P-256 JWK (kty, crv, x, y, d)")
        }
        do { try self.init(privateKey: try PrivateKey(joseCurve: "P-256", d: d, x: x, y: y)) } catch let error as WalletError {
            throw error
        } catch {
            throw WalletError.usage("bad private JWK: \(error)")
        }
    }

    init(privateKey: PrivateKey) throws {
        self.privateKey = privateKey
        guard case .ec(let curve, let x, let y) = privateKey.publicKey.components else {
            throw WalletError.usage("P-256 key generation gave a non-EC key")
        }
        let jwk: [String: JSONValue] = ["kty": "EC", "crv": .string(curve), "x": .string(Base64URL.encode(x)), "y": .string(Base64URL.encode(y))]
        publicJWK = jwk
        func header(_ type: String) -> [UInt8] {
            var encoded: [UInt8] = []
            Base64URL.encode(JSONValue.object(Self.header(type: type, jwk: jwk)).bytes, appendingTo: &encoded)
            return encoded
        }
        keyProofHeader = header(Self.keyProofType)
        dpopHeader = header(Self.dpopType)
    }

    /// The header of a proof of possession (DPoP and the OpenID4VCI key proof share its shape).
    /// The public JWK (kty, crv, x, y).
    public var jwk: [String: JSONValue] { publicJWK }
    /// RFC 7638 thumbprint of the public key.
    public var thumbprint: String { (try? JWK(json: publicJWK).thumbprint()) ?? "" }
    /// The private JWK (with `d`): only for the test wallet file, never logged or sent.
    public func privateJWK() throws -> [String: JSONValue] {
        guard let d = try privateKey.ecPrivateScalar() else { throw WalletError.usage("not an EC key") }
        var jwk = publicJWK
        jwk["d"] = .string(Base64URL.encode(d))
        return jwk
    }

    /// A compact JWS under any header (`alg` ES256 is set here).
    public func sign(header: [String: JSONValue], claims: [String: JSONValue]) throws -> String {
        try JWS.sign(header: header, payloadBytes: JSONValue.object(claims).bytes, key: privateKey, algorithm: .ES256)
    }

    /// Raw r‖s ES256 signature over `data` (a `hardware_signature`).
    public func signature(_ data: [UInt8]) throws -> [UInt8] { try privateKey.sign(data, algorithm: .ES256) }

    private static func header(type: String, jwk: [String: JSONValue]) -> [String: JSONValue] {
        ["alg": .string(SignatureAlgorithm.ES256.rawValue), "typ": .string(type), "jwk": .object(jwk)]
    }

    /// A compact JWS under one of the headers made at init (`keyProofHeader`, `dpopHeader`),
    /// which carry `jwk`: the proof-of-possession shape DPoP and the OpenID4VCI key proof share.
    public func signedJWT(encodedHeader: [UInt8], payload: [UInt8]) throws -> String {
        String(decoding: try JWS.signCompact(encodedHeader: encodedHeader, payloadBytes: payload, key: privateKey, algorithm: .ES256),
               as: UTF8.self)
    }
}

public enum WalletProofs {
    public static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    public static func randomToken(_ bytes: Int = 16) -> String { Base64URL.encode(SecureRandom.bytes(bytes)) }

    /// RFC 9449 §4.2: a DPoP proof for one request. `htu` is the target URI without query and
    /// fragment; `ath` (§4.3) binds the proof to the access token at a resource server.
    public static func dpop(key: HolderKey, method: String, url: String, nonce: String?, accessToken: String?) throws -> String {
        var claims = JSONWriter(capacity: 160 + url.utf8.count + (nonce?.utf8.count ?? 0))
        claims.openObject()
        if let accessToken { claims.member("ath", Base64URL.encode(Digest.sha256(Array(accessToken.utf8)))) }
        claims.member("htm", method)
        claims.member("htu", htu(url))
        claims.member("iat", now())
        claims.member("jti", randomToken())
        if let nonce { claims.member("nonce", nonce) }
        claims.closeObject()
        return try key.signedJWT(encodedHeader: key.dpopHeader, payload: claims.bytes)
    }

    public static func htu(_ url: String) -> String {
        // On the UTF-8 view, not by Character, which runs grapheme breaking over the URL for
        // every proof the load client makes. "?" and "#" are ASCII, so the cut is a character
        // boundary.
        guard let cut = url.utf8.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) else { return url }
        return String(url[..<cut])
    }

    /// OpenID4VCI 1.0 Appendix F.1: the `jwt` key proof. `iss` is the client_id, omitted in the
    /// anonymous pre-authorized flow; `nonce` is the c_nonce when the issuer has a nonce endpoint.
    public static func keyProof(key: HolderKey, audience: String, nonce: String?, clientID: String?) throws -> String {
        var claims = JSONWriter(capacity: 64 + audience.utf8.count + (nonce?.utf8.count ?? 0) + (clientID?.utf8.count ?? 0))
        claims.openObject()
        claims.member("aud", audience)
        claims.member("iat", now())
        if let clientID { claims.member("iss", clientID) }
        if let nonce { claims.member("nonce", nonce) }
        claims.closeObject()
        return try key.signedJWT(encodedHeader: key.keyProofHeader, payload: claims.bytes)
    }

    /// RFC 7636 §4.1–4.2: a 43-character verifier and its S256 challenge.
    public static func pkce() -> (verifier: String, challenge: String) {
        let verifier = randomToken(32)
        return (verifier, Base64URL.encode(Digest.sha256(Array(verifier.utf8))))
    }
}
