import Cryptography
import JSON
import Support

/// Makes the disclosures of one issuance straight into the text the holder receives: each
/// disclosure's JSON (`["<salt>","<name>",<value>]`, RFC 9901 §4.2.1) is written into one
/// scratch buffer, base64url-encoded onto the end of `text` followed by its `~`, and hashed
/// there for its digest (§4.2.3). The bytes are those `Disclosure(salt:name:value:)` makes
/// (the same serializer wrote the name and value, once, in `SDJWTPayloadTemplate`; a base64url
/// salt needs no escape), so the digests are unchanged; what goes is a String for each salt,
/// JSON array and encoding, the arrays for each JSON value and the concatenation of the
/// finished SD-JWT, for each of a PID's dozens of disclosures (measured: see
/// docs/performance.md).
///
/// Local to one issuance: never shared, every random byte handed out once.
struct DisclosureWriter {
    /// One disclosure as made, for a caller that wants `Disclosure` values: its JSON and where
    /// its base64url lies in `text`.
    struct Made {
        let json: [UInt8]
        let range: Range<Int>
    }

    /// `<d1>~<d2>~…<dn>~`: every disclosure's base64url, each followed by the separator, as the
    /// compact SD-JWT ends after its issuer-signed JWT.
    private(set) var text: [UInt8] = []
    /// Filled only when `keepDisclosures` was asked for.
    private(set) var made: [Made] = []
    private(set) var count = 0
    private let keepDisclosures: Bool
    private var json: [UInt8] = []
    /// Salts (128 bits each, RFC 9901 §9.3) and decoy inputs (256 bits) from one CSPRNG pool.
    private var random = SecureRandom.Buffer()
    /// One SHA-256 context for every digest (see Digest.SHA256Context).
    private let hasher = Digest.SHA256Context()

    /// Salt length in bytes (its base64url is 22 characters).
    static let saltLength = 16

    init(keepDisclosures: Bool, expectedCount: Int = 64) {
        self.keepDisclosures = keepDisclosures
        text.reserveCapacity(expectedCount * 96)
        json.reserveCapacity(256)
    }

    /// Discloses an object member (`key` = `"name",`, the name as the serializer writes it) or
    /// an array element (`key` empty) whose value serializes to `value`, and appends the digest
    /// that replaces it in the payload, quoted (`"<base64url>"`), to `digests`.
    mutating func disclose(key: [UInt8], value: [UInt8], digestInto digests: inout [UInt8]) {
        json.removeAll(keepingCapacity: true)
        json.append(UInt8(ascii: "["))
        json.append(UInt8(ascii: "\""))
        random.withNext(Self.saltLength) { Base64URL.encode($0, appendingTo: &json) }
        json.append(UInt8(ascii: "\""))
        json.append(UInt8(ascii: ","))
        json += key
        json += value
        json.append(UInt8(ascii: "]"))

        let start = text.count
        json.withUnsafeBufferPointer { Base64URL.encode($0, appendingTo: &text) }
        let end = text.count
        let hasher = self.hasher
        text.withUnsafeBufferPointer { text in
            hasher.withHash(UnsafeBufferPointer(rebasing: text[start..<end])) { Self.appendQuoted($0, to: &digests) }
        }
        text.append(UInt8(ascii: "~"))
        count += 1
        if keepDisclosures { made.append(Made(json: json, range: start..<end)) }
    }

    /// A digest over 256 random bits, indistinguishable from a real one (RFC 9901 §4.2.5),
    /// appended quoted to `digests`.
    mutating func decoyDigest(into digests: inout [UInt8]) {
        let hasher = self.hasher
        random.withNext(32) { input in hasher.withHash(input) { Self.appendQuoted($0, to: &digests) } }
    }

    private static func appendQuoted(_ digest: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        Base64URL.encode(digest, appendingTo: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// The disclosures as values (only when made with `keepDisclosures`), their parts read
    /// back from the JSON each was made of.
    var disclosures: [Disclosure] {
        made.map { made in
            let encoded = String(decoding: text[made.range], as: UTF8.self)
            guard let parts = try? JSONValue.parse(made.json).arrayValue, let salt = parts.first?.stringValue,
                  let value = parts.last, parts.count == 2 || parts.count == 3 else {
                preconditionFailure("a disclosure this writer made does not parse")
            }
            return Disclosure(salt: salt, name: parts.count == 3 ? parts[1].stringValue : nil, value: value, encoded: encoded)
        }
    }
}
