import Support
import Cryptography
import JSON

extension JWK {
    /// RFC 7638 thumbprint: SHA-256 over the required members only, in lexicographic order,
    /// without whitespace, base64url-encoded. Used as the default kid.
    public func thumbprint() -> String {
        // The members written out directly when all are plain strings (always, for a key
        // init(json:) accepted) instead of a dictionary sorted and serialized: every key proof
        // and DPoP proof checked takes a thumbprint (measured: see docs/performance.md).
        let names = Self.requiredMembers(kty: kty)
        let plain = names.compactMap { name in json[name]?.stringValue.map { (name: name, value: $0) } }
        if plain.count == names.count, let input = JSONValue.plainStringObject(plain) {
            return Base64URL.encode(Digest.sha256(input))
        }
        var required: [String: JSONValue] = [:]
        for member in names { required[member] = json[member] }
        // The serializer sorts keys and writes no whitespace, which is exactly RFC 7638 §3.3
        // for these members (ASCII names, base64url and curve-name values need no escaping).
        return Base64URL.encode(Digest.sha256(JSONValue.object(required).bytes))
    }

    static func requiredMembers(kty: String) -> [String] {
        switch kty {
        case "EC": return ["crv", "kty", "x", "y"]
        case "OKP": return ["crv", "kty", "x"]
        default: return ["e", "kty", "n"]
        }
    }
}
