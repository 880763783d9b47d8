import Support
import Cryptography
import JSON

extension JWK {
    /// RFC 7638 thumbprint: SHA-256 over the required members only, in lexicographic order,
    /// without whitespace, base64url-encoded. Used as the default kid.
    public func thumbprint() -> String {
        var required: [String: JSONValue] = [:]
        for member in Self.requiredMembers(kty: kty) { required[member] = json[member] }
        // The serializer sorts keys and writes no whitespace, which is exactly RFC 7638 §3.3
        // for these members (ASCII names, base64url and curve-name values need no escaping).
        return Base64URL.encode(Digest.sha256(JSONValue.object(required).bytes))
    }

    /// RFC 7638 §3 for required members already in lexicographic order whose names and values
    /// need no JSON escaping (member names, curve names, base64url): `{"name":"value",...}`.
    static func thumbprint(ofRequired members: [(name: String, value: String)]) -> String {
        var input: [UInt8] = []
        input.reserveCapacity(members.reduce(2) { $0 + $1.name.utf8.count + $1.value.utf8.count + 6 })
        input.append(UInt8(ascii: "{"))
        for (i, member) in members.enumerated() {
            if i > 0 { input.append(UInt8(ascii: ",")) }
            input.append(UInt8(ascii: "\""))
            input += member.name.utf8
            input += [UInt8(ascii: "\""), UInt8(ascii: ":"), UInt8(ascii: "\"")]
            input += member.value.utf8
            input.append(UInt8(ascii: "\""))
        }
        input.append(UInt8(ascii: "}"))
        return Base64URL.encode(Digest.sha256(input))
    }

    static func requiredMembers(kty: String) -> [String] {
        switch kty {
        case "EC": return ["crv", "kty", "x", "y"]
        case "OKP": return ["crv", "kty", "x"]
        default: return ["e", "kty", "n"]
        }
    }
}
