import Support
import JSON

/// A parsed JWS in compact serialization (RFC 7515 §7.1). Parsing checks structure only;
/// nothing in it is trusted until verify() has returned a key.
public struct JWS: Sendable {
    public let compact: String
    public let header: [String: JSONValue]
    public let payloadBytes: [UInt8]
    /// ASCII of "b64header.b64payload", exactly as received.
    public let signingInput: [UInt8]
    public let signature: [UInt8]

    /// Bounds memory and parse time for untrusted input; entity statements with large
    /// metadata and trust chains stay far below it.
    public static let maximumCompactLength = 256 * 1024

    /// `maximumLength`: a caller whose input is already bounded otherwise (a request body
    /// limit) may allow a larger JWS, e.g. an instruction carrying a device transfer's payload.
    public static func parse(_ compact: String, maximumLength: Int = maximumCompactLength) throws(JOSEError) -> JWS {
        let bytes = Array(compact.utf8)
        guard bytes.count <= maximumLength else { throw .malformed("JWS larger than \(maximumLength) bytes") }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("compact JWS must have 3 parts, found \(parts.count)") }
        guard !parts[0].isEmpty else { throw .malformed("empty protected header") }

        guard let headerBytes = decode(parts[0]) else { throw .malformed("header is not base64url") }
        guard let payloadBytes = decode(parts[1]) else { throw .malformed("payload is not base64url") }
        guard let signature = decode(parts[2]) else { throw .malformed("signature is not base64url") }

        let header: JSONValue
        do { header = try JSONValue.parse(headerBytes) } catch { throw .malformed("header: \(error)") }
        guard let headerObject = header.objectValue else { throw .malformed("header is not a JSON object") }

        return JWS(
            compact: compact, header: headerObject, payloadBytes: payloadBytes,
            signingInput: Array(bytes[..<(parts[1].endIndex)]), signature: signature)
    }

    private static func decode(_ part: ArraySlice<UInt8>) -> [UInt8]? {
        part.withUnsafeBufferPointer { Base64URL.decode($0) }
    }

    public var algorithm: String? { header["alg"]?.stringValue }
    public var keyID: String? { header["kid"]?.stringValue }
    public var type: String? { header["typ"]?.stringValue }

    /// The payload as a JSON object; anything else (array, string, invalid JSON) is malformed.
    public func payload() throws(JOSEError) -> [String: JSONValue] {
        let value: JSONValue
        do { value = try JSONValue.parse(payloadBytes) } catch { throw .malformed("payload: \(error)") }
        guard let object = value.objectValue else { throw .malformed("payload is not a JSON object") }
        return object
    }
}
