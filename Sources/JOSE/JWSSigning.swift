import Support
import Cryptography
import JSON

extension JWS {
    /// Header = extraHeader overlaid with {alg, kid, typ}; payload serialized with sorted keys.
    public static func sign(
        payload: [String: JSONValue], key: PrivateKey, algorithm: SignatureAlgorithm, keyID: String,
        type: String?, extraHeader: [String: JSONValue] = [:]
    ) throws(JOSEError) -> String {
        let payloadBytes = JSONValue.object(payload).bytes
        // The usual header, {alg, kid, typ}, is written out directly rather than built as an
        // object and serialized: a cold resolve signs three statements.
        if extraHeader.isEmpty, let header = plainHeader(algorithm: algorithm, keyID: keyID, type: type) {
            return try sign(headerJSON: header, payloadBytes: payloadBytes, key: key, algorithm: algorithm)
        }
        var header = extraHeader
        header["alg"] = .string(algorithm.rawValue)
        header["kid"] = .string(keyID)
        if let type { header["typ"] = .string(type) }
        return try sign(header: header, payloadBytes: payloadBytes, key: key, algorithm: algorithm)
    }

    /// Signs arbitrary payload bytes under a complete header (SD-JWT and other non-object payloads).
    /// The header's alg is forced to `algorithm` so the two can never disagree.
    public static func sign(
        header: [String: JSONValue], payloadBytes: [UInt8], key: PrivateKey, algorithm: SignatureAlgorithm
    ) throws(JOSEError) -> String {
        var header = header
        header["alg"] = .string(algorithm.rawValue)
        return try sign(headerJSON: JSONValue.object(header).bytes, payloadBytes: payloadBytes, key: key, algorithm: algorithm)
    }

    /// The compact JWS under the header's JSON bytes (which name `algorithm`).
    private static func sign(
        headerJSON header: [UInt8], payloadBytes: [UInt8], key: PrivateKey, algorithm: SignatureAlgorithm
    ) throws(JOSEError) -> String {
        var encodedHeader: [UInt8] = []
        Base64URL.encode(header, appendingTo: &encodedHeader)
        return String(decoding: try signCompact(encodedHeader: encodedHeader, payloadBytes: payloadBytes, key: key,
                                                algorithm: algorithm), as: UTF8.self)
    }

    /// The compact JWS as bytes, for an issuer that signs many payloads under one header
    /// (encoded once, its `alg` naming `algorithm`: the caller's duty) and appends more text
    /// after the JWS (an SD-JWT's disclosures: `reservingCapacity` leaves room for them).
    public static func signCompact(
        encodedHeader: [UInt8], payloadBytes: [UInt8], key: PrivateKey, algorithm: SignatureAlgorithm,
        reservingCapacity extra: Int = 0
    ) throws(JOSEError) -> [UInt8] {
        // The payload and signature are encoded straight into the buffer, with no String made
        // and copied for each.
        let encodedPayloadLength = (payloadBytes.count * 4 + 2) / 3
        let signatureLength = 4 * 132 / 3 + 1   // base64url of the longest signature here (ES512)
        var jws: [UInt8] = []
        jws.reserveCapacity(encodedHeader.count + encodedPayloadLength + 2 + signatureLength + extra)
        jws += encodedHeader
        jws.append(UInt8(ascii: "."))
        Base64URL.encode(payloadBytes, appendingTo: &jws)
        let signature: [UInt8]
        do { signature = try key.sign(jws, algorithm: algorithm) } catch { throw JOSEError(error) }
        jws.append(UInt8(ascii: "."))
        Base64URL.encode(signature, appendingTo: &jws)
        return jws
    }

    /// `{"alg":…,"kid":…,"typ":…}` (`typ` only when given) as the serializer writes it, or nil
    /// when a value needs a JSON escape.
    static func plainHeader(algorithm: SignatureAlgorithm, keyID: String, type: String?) -> [UInt8]? {
        var members = [(name: "alg", value: algorithm.rawValue), (name: "kid", value: keyID)]
        if let type { members.append((name: "typ", value: type)) }
        return JSONValue.plainStringObject(members)
    }
}
