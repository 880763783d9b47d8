/// Decoded `name=value` pairs of a query string or an `application/x-www-form-urlencoded` body,
/// in order with repeated names kept. Protocol code reads these; the checks for "exactly once"
/// and "at most once" live here so every endpoint applies the same rule (OAuth 2.0 §3.1: a
/// parameter must not appear more than once; OpenID Federation §8: unknown ones are ignored).
public struct Parameters: Sendable {
    public let pairs: [(name: String, value: String)]

    public init(pairs: [(name: String, value: String)]) { self.pairs = pairs }

    /// Parses a query string (without `?`) or a form body.
    public init(encoded: String) { pairs = URLEncoding.pairs(encoded) }

    public init(encoded bytes: [UInt8]) {
        pairs = bytes.withUnsafeBufferPointer { URLEncoding.pairs($0) }
    }

    public var names: Set<String> { Set(pairs.map(\.name)) }

    /// Every value of `name`, in order.
    public func all(_ name: String) -> [String] { pairs.compactMap { $0.name == name ? $0.value : nil } }

    /// The value of a parameter that must appear exactly once and not be empty.
    public func single(_ name: String) throws(ParameterError) -> String {
        let (first, repeated) = firstValue(name)
        guard let first, !first.isEmpty else { throw .missing(name) }
        guard !repeated else { throw .repeated(name) }
        return first
    }

    /// The value of a parameter that may appear at most once (an empty value counts as absent).
    public func optional(_ name: String) throws(ParameterError) -> String? {
        let (first, repeated) = firstValue(name)
        guard !repeated else { throw .repeated(name) }
        return first.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The first value of `name` and whether another follows: what `single` and `optional`
    /// need, found by a scan instead of collecting `all(name)` into an array (several calls per
    /// token and PAR request).
    private func firstValue(_ name: String) -> (String?, repeated: Bool) {
        var first: String?
        for pair in pairs where pair.name == name {
            if first != nil { return (first, true) }
            first = pair.value
        }
        return (first, false)
    }

    /// `true` or `false`, at most once.
    public func bool(_ name: String) throws(ParameterError) -> Bool? {
        switch try optional(name) {
        case nil: return nil
        case "true": return true
        case "false": return false
        default: throw .invalid(name, "must be true or false")
        }
    }

    /// `a=b&c=d`, percent-encoded for a query or a form body.
    public var encoded: String {
        // One buffer for the whole text, not a String per name, value and pair joined after.
        var out: [UInt8] = []
        out.reserveCapacity(pairs.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 2 })
        for (i, pair) in pairs.enumerated() {
            if i > 0 { out.append(UInt8(ascii: "&")) }
            URLEncoding.encode(pair.name, appendingTo: &out)
            out.append(UInt8(ascii: "="))
            URLEncoding.encode(pair.value, appendingTo: &out)
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Why a parameter was refused; endpoints map it to their spec's `invalid_request`.
public enum ParameterError: Error, Equatable, Sendable, CustomStringConvertible {
    case missing(String)
    case repeated(String)
    case invalid(String, String)

    public var description: String {
        switch self {
        case .missing(let n): return "\(n) is required"
        case .repeated(let n): return "\(n) must not appear more than once"
        case .invalid(let n, let why): return "\(n) \(why)"
        }
    }
}

extension URLEncoding {
    /// `target` with `parameters` added to its query (percent-encoded), after any query it
    /// already has (an OAuth redirect URI or a fetch endpoint may carry one, RFC 6749 §3.1.2)
    /// and before any fragment.
    public static func appendingQuery(_ parameters: [(String, String)], to target: String) -> String {
        guard !parameters.isEmpty else { return target }
        // Searched as bytes (`#`, `?` and `&` are ASCII, so their offsets are character
        // boundaries), not by Character, which runs grapheme breaking over the whole link.
        let utf8 = target.utf8
        let hash = utf8.firstIndex(of: UInt8(ascii: "#")) ?? utf8.endIndex
        let base = utf8[..<hash]
        let separator: String
        if !base.contains(UInt8(ascii: "?")) { separator = "?" }
        else if base.last == UInt8(ascii: "?") || base.last == UInt8(ascii: "&") { separator = "" }
        else { separator = "&" }
        return target[..<hash] + separator + Parameters(pairs: parameters).encoded + target[hash...]
    }

    /// Percent-encodes everything but RFC 3986 unreserved characters, so the result is safe in a
    /// query, a form body and a path segment alike.
    public static func encode(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        encode(text, appendingTo: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `encode(text)` appended to `out` as bytes. Read through the contiguous UTF-8 and looked up
    /// in a table: the by-value offer link percent-encodes a whole credential offer (about half
    /// its bytes escaped), so no array literal is made per escape.
    public static func encode(_ text: String, appendingTo out: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            unreserved.withUnsafeBufferPointer { unreserved in
                for b in bytes {
                    if unreserved[Int(b)] {
                        out.append(b)
                    } else {
                        out.append(UInt8(ascii: "%"))
                        out.append(upperHex[Int(b >> 4)])
                        out.append(upperHex[Int(b & 15)])
                    }
                }
            }
        }
    }

    /// RFC 3986 §2.3 unreserved characters, indexed by byte.
    private static let unreserved: [Bool] = (0 ..< 256).map { b in
        switch UInt8(b) {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static let upperHex: [UInt8] = Array("0123456789ABCDEF".utf8)
}
