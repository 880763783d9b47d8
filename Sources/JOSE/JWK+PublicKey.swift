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
    ///
    /// The kid is hashed from the members written out directly (`JSONValue.plainStringObject`)
    /// rather than from a JSON object sorted and serialized, and the object is sized once: a cold
    /// resolve in a large federation builds a leaf's JWK on every key load.
    public init(components: PublicKeyComponents, algorithm: SignatureAlgorithm? = nil, use: String? = "sig") {
        var json: [String: JSONValue] = Dictionary(minimumCapacity: 7)
        var required: [(name: String, value: String)]
        switch components {
        case .ec(let curve, let x, let y):
            required = [("crv", curve), ("kty", "EC"), ("x", Base64URL.encode(x)), ("y", Base64URL.encode(y))]
        case .okp(let curve, let x):
            required = [("crv", curve), ("kty", "OKP"), ("x", Base64URL.encode(x))]
        case .rsa(let n, let e):
            required = [("e", Base64URL.encode(e)), ("kty", "RSA"), ("n", Base64URL.encode(n))]
        }
        for (name, value) in required { json[name] = .string(value) }
        // RFC 7638 §3's input is the required members in this (sorted) order. A curve name is the
        // one string here not from this code's base64url; should one need escaping, the
        // serializer writes it.
        let kid = JSONValue.plainStringObject(required).map { Base64URL.encode(Digest.sha256($0)) } ?? JWK(validated: json).thumbprint()
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
