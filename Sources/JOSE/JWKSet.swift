import JSON

/// A JWK Set (RFC 7517 §5): the trusted keys a JWS is verified against.
public struct JWKSet: Hashable, Sendable {
    public var keys: [JWK]

    public init(keys: [JWK]) { self.keys = keys }

    /// `{"keys":[...]}`. Any member with private or symmetric material, or a malformed member of
    /// a supported type, rejects the whole set. Members of key types or curves not implemented
    /// here (X25519, Ed448, secp256k1, ...) are skipped, as RFC 7517 §5 advises.
    public init(json: JSONValue) throws(JOSEError) {
        guard let members = json["keys"]?.arrayValue else { throw .malformed("JWK set needs a \"keys\" array") }
        var keys: [JWK] = []
        keys.reserveCapacity(members.count)
        for member in members {
            guard let object = member.objectValue else { throw .malformed("JWK set member is not an object") }
            if JWK.isForeignKeyType(object) { continue }
            keys.append(try JWK(json: object))
        }
        self.keys = keys
    }

    public var jsonValue: JSONValue { ["keys": .array(keys.map(\.jsonValue))] }

    /// The first key with this kid.
    public func key(withID kid: String) -> JWK? { keys.first { $0.kid == kid } }
}
