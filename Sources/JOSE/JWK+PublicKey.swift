import Support
import Cryptography
import JSON

extension JWK {
    /// The JWK for a public key; kid is its RFC 7638 thumbprint.
    public init(publicKey: PublicKey, algorithm: SignatureAlgorithm? = nil, use: String? = "sig") {
        self.init(components: publicKey.components, algorithm: algorithm, use: use)
    }

    /// The JWK for public numbers a key (possibly a private one) already gave, without building
    /// an OpenSSL public key: a large federation loads a leaf's private key to sign its entity
    /// configuration and needs only these numbers for its `jwks` (see `PrivateKey.publicKey`).
    public init(components: PublicKeyComponents, algorithm: SignatureAlgorithm? = nil, use: String? = "sig") {
        var json: [String: JSONValue]
        switch components {
        case .ec(let curve, let x, let y):
            json = ["kty": "EC", "crv": .string(curve), "x": .string(Base64URL.encode(x)), "y": .string(Base64URL.encode(y))]
        case .okp(let curve, let x):
            json = ["kty": "OKP", "crv": .string(curve), "x": .string(Base64URL.encode(x))]
        case .rsa(let n, let e):
            json = ["kty": "RSA", "n": .string(Base64URL.encode(n)), "e": .string(Base64URL.encode(e))]
        }
        let kid = JWK(validated: json).thumbprint()
        json["kid"] = .string(kid)
        if let algorithm { json["alg"] = .string(algorithm.rawValue) }
        if let use { json["use"] = .string(use) }
        self.init(validated: json)
    }

    /// The OpenSSL key, checked (an EC point must lie on its curve).
    public func publicKey() throws(JOSEError) -> PublicKey {
        let components: PublicKeyComponents
        switch kty {
        case "EC":
            components = .ec(curve: json["crv"]?.stringValue ?? "", x: bytes("x"), y: bytes("y"))
        case "OKP":
            components = .okp(curve: json["crv"]?.stringValue ?? "", x: bytes("x"))
        case "RSA":
            components = .rsa(n: bytes("n"), e: bytes("e"))
        default:
            throw .invalidKey("unsupported kty \"\(kty)\"")
        }
        do {
            return try PublicKey(components: components)
        } catch {
            throw JOSEError(error)
        }
    }

    /// init(json:) already proved these members decode.
    private func bytes(_ member: String) -> [UInt8] {
        json[member]?.stringValue.flatMap(Base64URL.decode) ?? []
    }
}
