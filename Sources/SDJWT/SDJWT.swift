import JOSE

/// An SD-JWT or SD-JWT+KB in compact form (RFC 9901 §4): `<issuer JWT>~<d1>~...~<dn>~` followed
/// by a Key Binding JWT or nothing. Parsing checks structure only; `verify` establishes trust.
public struct SDJWT: Sendable, Equatable {
    public let issuerJWT: String
    public let disclosures: [Disclosure]
    public let keyBindingJWT: String?

    /// Bounds memory for untrusted input: a PID with dozens of disclosures is a few KiB.
    public static let maximumLength = 256 * 1024

    public init(issuerJWT: String, disclosures: [Disclosure], keyBindingJWT: String?) {
        self.issuerJWT = issuerJWT
        self.disclosures = disclosures
        self.keyBindingJWT = keyBindingJWT
    }

    public static func parse(_ text: String) throws(SDJWTError) -> SDJWT {
        guard text.utf8.count <= maximumLength else { throw .malformed("larger than \(maximumLength) bytes") }
        // Split on the bytes: "~" never occurs inside a multi-byte UTF-8 sequence. Over contiguous
        // bytes, not `String.UTF8View`, whose generic `split` steps index by index (measured:
        // docs/performance.md, issue 22).
        let parts = text.utf8.withContiguousStorageIfAvailable(Self.split) ?? Array(text.utf8).withUnsafeBufferPointer(Self.split)
        // At least "<jwt>~": a JWT alone (no tilde) is not an SD-JWT.
        guard parts.count >= 2 else { throw .malformed("no \"~\" separator") }
        guard !parts[0].isEmpty else { throw .malformed("empty issuer-signed JWT") }
        var disclosures: [Disclosure] = []
        for encoded in parts[1..<(parts.count - 1)] {
            guard !encoded.isEmpty else { throw .malformed("empty disclosure (\"~~\")") }
            disclosures.append(try Disclosure(encoded: encoded))
        }
        let last = parts[parts.count - 1]
        return SDJWT(issuerJWT: parts[0], disclosures: disclosures, keyBindingJWT: last.isEmpty ? nil : last)
    }

    /// The `~`-separated parts, empty ones included.
    private static func split(_ bytes: UnsafeBufferPointer<UInt8>) -> [String] {
        bytes.split(separator: UInt8(ascii: "~"), omittingEmptySubsequences: false)
            .map { String(decoding: UnsafeBufferPointer(rebasing: $0), as: UTF8.self) }
    }

    /// The SD-JWT without its KB-JWT, ending in `~`: what `sd_hash` covers (RFC 9901 §4.3.1).
    public var withoutKeyBinding: String {
        // One buffer sized once, not `+=` of a String per disclosure (a PID has ~50).
        var out: [UInt8] = []
        out.reserveCapacity(disclosures.reduce(issuerJWT.utf8.count + 1) { $0 + $1.encoded.utf8.count + 1 })
        out += issuerJWT.utf8
        out.append(UInt8(ascii: "~"))
        for disclosure in disclosures {
            out += disclosure.encoded.utf8
            out.append(UInt8(ascii: "~"))
        }
        return String(decoding: out, as: UTF8.self)
    }

    public var serialized: String { withoutKeyBinding + (keyBindingJWT ?? "") }

    /// The issuer-signed JWT, parsed but not verified.
    public func parsedIssuerJWT() throws(SDJWTError) -> JWS {
        do { return try JWS.parse(issuerJWT) } catch { throw .jose(error) }
    }
}

extension SDJWT: CustomStringConvertible {
    public var description: String { serialized }
}
