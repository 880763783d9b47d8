import Cryptography
import JSON
import Support

/// The hash functions for disclosure digests, named as in the IANA "Named Information Hash
/// Algorithm" registry that `_sd_alg` uses (RFC 9901 §4.1.1). SHA-256 is the default when
/// `_sd_alg` is absent and the only one this library issues with.
public enum DigestAlgorithm: String, Sendable, CaseIterable {
    case sha256 = "sha-256"
    case sha384 = "sha-384"
    case sha512 = "sha-512"

    public func hash(_ bytes: [UInt8]) -> [UInt8] {
        switch self {
        case .sha256: return Digest.sha256(bytes)
        case .sha384: return Digest.sha384(bytes)
        case .sha512: return Digest.sha512(bytes)
        }
    }

    /// base64url(hash(ASCII(text))): the digest of a disclosure (RFC 9901 §4.2.3) and the
    /// `sd_hash` of a presentation (§4.3.1) are both computed this way.
    public func digest(of text: String) -> String {
        Base64URL.encode(hash(Array(text.utf8)))
    }
}

/// One disclosure (RFC 9901 §4.2): `[salt, name, value]` for an object member, `[salt, value]`
/// for an array element, as base64url of its JSON. The encoded string is kept as received,
/// because the digest covers those exact bytes and other issuers serialize differently
/// (spaces, escapes) from us.
public struct Disclosure: Hashable, Sendable {
    public let salt: String
    /// The claim name; nil for an array element.
    public let name: String?
    public let value: JSONValue
    public let encoded: String

    /// 128 bits from the CSPRNG, the minimum RFC 9901 §9.3 recommends for salts.
    public static func randomSalt() -> String { Base64URL.encode(SecureRandom.bytes(16)) }

    /// A disclosure for an object member (`name` given) or an array element (`name` nil),
    /// serialized with the deterministic JSON serializer.
    public init(salt: String = Disclosure.randomSalt(), name: String?, value: JSONValue) {
        self.salt = salt
        self.name = name
        self.value = value
        let array: [JSONValue] = name.map { [.string(salt), .string($0), value] } ?? [.string(salt), value]
        self.encoded = Base64URL.encode(JSONValue.array(array).bytes)
    }

    /// A disclosure whose encoding was made already (see DisclosureWriter), from these parts.
    init(salt: String, name: String?, value: JSONValue, encoded: String) {
        self.salt = salt
        self.name = name
        self.value = value
        self.encoded = encoded
    }

    /// Parses a received disclosure. Only structure is checked here; which names are allowed
    /// where is decided when the payload is processed.
    public init(encoded: String) throws(SDJWTError) {
        guard let bytes = Base64URL.decode(encoded) else { throw .malformedDisclosure("not base64url") }
        let json: JSONValue
        do { json = try JSONValue.parse(bytes) } catch { throw .malformedDisclosure("not JSON: \(error)") }
        guard let array = json.arrayValue else { throw .malformedDisclosure("not a JSON array") }
        guard let salt = array.first?.stringValue else { throw .malformedDisclosure("salt must be a string") }
        switch array.count {
        case 2:
            name = nil
            value = array[1]
        case 3:
            guard let claimName = array[1].stringValue else { throw .malformedDisclosure("claim name must be a string") }
            name = claimName
            value = array[2]
        default:
            throw .malformedDisclosure("must have 2 or 3 elements, has \(array.count)")
        }
        self.salt = salt
        self.encoded = encoded
    }

    /// The digest that the payload's `_sd` array or `...` entry carries for this disclosure.
    public func digest(_ algorithm: DigestAlgorithm = .sha256) -> String {
        algorithm.digest(of: encoded)
    }

    /// A digest over random bytes, indistinguishable from a real one (RFC 9901 §4.2.5), so
    /// the count of `_sd` entries does not reveal how many claims there are.
    public static func decoyDigest(_ algorithm: DigestAlgorithm = .sha256, random: [UInt8] = SecureRandom.bytes(32)) -> String {
        Base64URL.encode(algorithm.hash(random))
    }
}
