import Support
import JSON

/// A public JSON Web Key (RFC 7517) for one of the key types JWS here can verify with:
/// EC P-256/384/521, OKP Ed25519, RSA. Extra members (kid, use, alg, exp, iat, revoked, x5c, ...)
/// are kept as given; private and symmetric key material is refused outright, so a JWK value
/// is always safe to publish.
public struct JWK: Hashable, Sendable {
    public let json: [String: JSONValue]

    /// Members that carry secrets (RFC 7518 §6.2.2, §6.3.2, §6.4.1; RFC 8037 §2).
    static let privateMembers: [String] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]
    /// Byte length of each coordinate, by "crv" (RFC 7518 §6.2.1.2 requires the full length).
    static let ecCoordinateSizes: [String: Int] = ["P-256": 32, "P-384": 48, "P-521": 66]

    public init(json: [String: JSONValue]) throws(JOSEError) {
        for member in Self.privateMembers where json[member] != nil {
            throw .invalidKey("private key member \"\(member)\" in a public JWK")
        }
        guard let kty = json["kty"]?.stringValue else { throw .invalidKey("missing or non-string kty") }
        switch kty {
        case "EC":
            guard let crv = json["crv"]?.stringValue, let size = Self.ecCoordinateSizes[crv] else {
                throw .invalidKey("EC key needs crv P-256, P-384 or P-521")
            }
            try Self.requireBytes(json, "x", count: size)
            try Self.requireBytes(json, "y", count: size)
        case "OKP":
            guard json["crv"]?.stringValue == "Ed25519" else { throw .invalidKey("OKP key needs crv Ed25519") }
            try Self.requireBytes(json, "x", count: 32)
        case "RSA":
            try Self.requireBytes(json, "n", count: nil)
            try Self.requireBytes(json, "e", count: nil)
        case "oct":
            throw .invalidKey("symmetric (oct) keys are not accepted")
        default:
            throw .invalidKey("unsupported kty \"\(kty)\"")
        }
        for member in ["kid", "alg", "use"] {
            if let v = json[member], v.stringValue == nil { throw .invalidKey("\(member) must be a string") }
        }
        if let ops = json["key_ops"], ops.stringArray == nil { throw .invalidKey("key_ops must be an array of strings") }
        self.json = json
    }

    /// Trusted construction from our own validated members; skips re-validation.
    init(validated json: [String: JSONValue]) { self.json = json }

    public var kid: String? { json["kid"]?.stringValue }
    public var kty: String { json["kty"]?.stringValue ?? "" }
    public var algorithm: String? { json["alg"]?.stringValue }
    public var jsonValue: JSONValue { .object(json) }

    /// Adds or replaces metadata members (e.g. exp, iat, revoked for historical keys, or kid).
    /// Key material and private members are never changed this way: a JWK stays the key it was.
    public func adding(_ members: [String: JSONValue]) -> JWK {
        var merged = json
        for (name, value) in members where !Self.protectedMembers.contains(name) {
            merged[name] = value
        }
        return JWK(validated: merged)
    }

    /// The key members only (kty, crv, x, y; n, e), without kid, use, alg or anything else a
    /// sender added: what binding a credential to a holder's key needs. A subset of members
    /// init(json:) accepted is itself valid, so it is not validated again (which would decode
    /// the coordinates once more for every key proof).
    public var keyMembersOnly: JWK {
        var members: [String: JSONValue] = Dictionary(minimumCapacity: 4)
        for name in ["kty", "crv", "x", "y", "n", "e"] { members[name] = json[name] }
        return JWK(validated: members)
    }

    private static let protectedMembers: Set<String> = Set(privateMembers + ["kty", "crv", "x", "y", "n", "e"])

    private static func requireBytes(_ json: [String: JSONValue], _ member: String, count: Int?) throws(JOSEError) {
        guard let text = json[member]?.stringValue, let bytes = Base64URL.decode(text), !bytes.isEmpty else {
            throw .invalidKey("\(member) must be a non-empty base64url string")
        }
        if let count, bytes.count != count {
            throw .invalidKey("\(member) must be \(count) bytes")
        }
    }

    /// Whether a JWK set member uses a key type or curve this library does not implement but is
    /// otherwise harmless, so a set can skip it as RFC 7517 §5 advises instead of failing.
    static func isForeignKeyType(_ json: [String: JSONValue]) -> Bool {
        guard !privateMembers.contains(where: { json[$0] != nil }), let kty = json["kty"]?.stringValue else { return false }
        switch kty {
        case "EC": return json["crv"]?.stringValue.map { ecCoordinateSizes[$0] == nil } ?? false
        case "OKP": return json["crv"]?.stringValue.map { $0 != "Ed25519" } ?? false
        case "RSA", "oct": return false
        default: return true
        }
    }
}
