import Support
import Cryptography
import JSON

extension JWS {
    /// Header = extraHeader overlaid with {alg, kid, typ}; payload serialized with sorted keys.
    public static func sign(
        payload: [String: JSONValue], key: PrivateKey, algorithm: SignatureAlgorithm, keyID: String,
        type: String?, extraHeader: [String: JSONValue] = [:]
    ) throws(JOSEError) -> String {
        var header = extraHeader
        header["alg"] = .string(algorithm.rawValue)
        header["kid"] = .string(keyID)
        if let type { header["typ"] = .string(type) }
        return try sign(header: header, payloadBytes: JSONValue.object(payload).bytes, key: key, algorithm: algorithm)
    }

    /// Signs arbitrary payload bytes under a complete header (SD-JWT and other non-object payloads).
    /// The header's alg is forced to `algorithm` so the two can never disagree.
    public static func sign(
        header: [String: JSONValue], payloadBytes: [UInt8], key: PrivateKey, algorithm: SignatureAlgorithm
    ) throws(JOSEError) -> String {
        var header = header
        header["alg"] = .string(algorithm.rawValue)
        let signingInput = Base64URL.encode(JSONValue.object(header).bytes) + "." + Base64URL.encode(payloadBytes)
        let signature: [UInt8]
        do { signature = try key.sign(Array(signingInput.utf8), algorithm: algorithm) } catch { throw JOSEError(error) }
        return signingInput + "." + Base64URL.encode(signature)
    }
}
