import Support
import JSON

/// Content encryption algorithms this library implements (RFC 7518 §5.3): AES-GCM with the
/// 96-bit IV and 128-bit tag, as OpenID4VCI and HAIP use for credential encryption.
public enum JWEContentEncryption: String, CaseIterable, Sendable {
    case A128GCM, A256GCM

    public var keyLength: Int {
        switch self {
        case .A128GCM: return 16
        case .A256GCM: return 32
        }
    }
}

/// A parsed JWE in compact serialization (RFC 7516 §7.1). Parsing checks structure only;
/// `decrypt(with:)` (JWEEncryption.swift) applies the header rules.
public struct JWE: Sendable {
    /// The only key management algorithm: direct key agreement (RFC 7518 §4.6).
    public static let ecdhES = "ECDH-ES"
    /// Bounds memory and parse time for untrusted input; a credential request or response
    /// (a few SD-JWTs or mdocs) stays far below it.
    public static let maximumCompactLength = 1024 * 1024

    public let compact: String
    public let header: [String: JSONValue]
    /// ASCII(BASE64URL(UTF8(protected header))), the additional authenticated data of RFC 7516
    /// §5.1 step 14, exactly as received.
    public let additionalAuthenticatedData: [UInt8]
    public let encryptedKey: [UInt8]
    public let initializationVector: [UInt8]
    public let ciphertext: [UInt8]
    public let tag: [UInt8]

    public static func parse(_ compact: String) throws(JWEError) -> JWE {
        let bytes = Array(compact.utf8)
        guard bytes.count <= maximumCompactLength else { throw .malformed("JWE larger than \(maximumCompactLength) bytes") }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 5 else { throw .malformed("compact JWE must have 5 parts, found \(parts.count)") }
        guard !parts[0].isEmpty else { throw .malformed("empty protected header") }
        var decoded: [[UInt8]] = []
        for (index, part) in parts.enumerated() {
            guard let value = Base64URL.decode(String(decoding: part, as: UTF8.self)) else {
                throw .malformed("part \(index + 1) is not base64url")
            }
            decoded.append(value)
        }
        let header: JSONValue
        do { header = try JSONValue.parse(decoded[0]) } catch { throw .malformed("header: \(error)") }
        guard let object = header.objectValue else { throw .malformed("header is not a JSON object") }
        return JWE(
            compact: compact, header: object, additionalAuthenticatedData: Array(parts[0]), encryptedKey: decoded[1],
            initializationVector: decoded[2], ciphertext: decoded[3], tag: decoded[4])
    }

    public var algorithm: String? { header["alg"]?.stringValue }
    public var encryption: String? { header["enc"]?.stringValue }
    public var keyID: String? { header["kid"]?.stringValue }
}
