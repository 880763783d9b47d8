#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JSON

/// The members of a JSON object the wallet reads from a response, without a tree of the rest.
/// A token response carries `credential_previews` (3.7 KB: every claim of the PID, a portrait
/// among them) that the wallet never reads; the strict parser made a dictionary of it per flow,
/// and parsing the four responses of a flow was 198,000 of the load client's 640,000
/// instructions per SD-JWT flow (callgrind).
///
/// The whole document is still checked as `JSONValue.parse` checks it (RFC 8259 grammar, escapes,
/// UTF-8, numbers, nesting depth, one value and nothing after it), so a malformed response is
/// refused whatever member it is malformed in. The kept members are built as it builds them
/// (strings with an escape are decoded by it), and no member name may appear twice at the top
/// level. The one thing not checked is a repeated name inside an object the wallet skips: it
/// cannot change what the wallet reads. A differential fuzz of 2 million documents against
/// `JSONValue.parse` found no other difference.
struct ResponseJSON {
    /// The member names to keep, with their UTF-8 bytes for comparing in place.
    let names: [String]
    private let utf8: [[UInt8]]

    init(_ names: String...) {
        self.names = names
        utf8 = names.map { Array($0.utf8) }
    }

    /// The document's kept members, or nil when `bytes` is not one JSON object, as
    /// `(try? JSONValue.parse(bytes))?.objectValue` is nil.
    func object(_ bytes: [UInt8]) -> [String: JSONValue]? {
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            return try? scanner.object(keeping: self)
        }
    }

    fileprivate func index(of key: UnsafeBufferPointer<UInt8>) -> Int? {
        utf8.firstIndex { name in
            name.count == key.count && (key.isEmpty || name.withUnsafeBufferPointer { memcmp($0.baseAddress!, key.baseAddress!, key.count) == 0 })
        }
    }
}

extension JSONScanner {
    mutating func object(keeping kept: ResponseJSON) throws(Malformed) -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        out.reserveCapacity(kept.names.count)
        // Each member name's content range and whether it has an escape, for the duplicate check.
        var seen: [(Range<Int>, Bool)] = []
        skipWhitespace()
        guard i < b.count, b[i] == UInt8(ascii: "{") else { throw Malformed() }
        i += 1
        skipWhitespace()
        if i < b.count, b[i] == UInt8(ascii: "}") {
            i += 1
        } else {
            while true {
                skipWhitespace()
                guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw Malformed() }
                let keyStart = i
                let escaped = try skipString()
                let token = keyStart..<i, name = (keyStart + 1)..<(i - 1)
                for (other, otherEscaped) in seen where try same(name, escaped, other, otherEscaped) { throw Malformed() }
                seen.append((name, escaped))
                skipWhitespace()
                guard i < b.count, b[i] == UInt8(ascii: ":") else { throw Malformed() }
                i += 1
                skipWhitespace()
                let index = escaped ? kept.names.firstIndex(of: try decoded(token)) : kept.index(of: rebased(name))
                if let index {
                    out[kept.names[index]] = try value(depth: 1)
                } else {
                    try skipValue(depth: 1)
                }
                skipWhitespace()
                guard i < b.count else { throw Malformed() }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                guard b[i] == UInt8(ascii: "}") else { throw Malformed() }
                i += 1
                break
            }
        }
        skipWhitespace()
        guard i == b.count else { throw Malformed() }
        return out
    }

    /// A string token (quotes included) as the strict parser decodes it.
    private func decoded(_ token: Range<Int>) throws(Malformed) -> String {
        guard let value = try? JSONValue.parse(Array(rebased(token))), case .string(let s) = value else { throw Malformed() }
        return s
    }

    /// Whether two member names are the same string once their escapes are decoded.
    private func same(_ x: Range<Int>, _ xEscaped: Bool, _ y: Range<Int>, _ yEscaped: Bool) throws(Malformed) -> Bool {
        if !xEscaped && !yEscaped {
            return x.count == y.count && memcmp(b.baseAddress! + x.lowerBound, b.baseAddress! + y.lowerBound, x.count) == 0
        }
        return try decoded((x.lowerBound - 1)..<(x.upperBound + 1)) == decoded((y.lowerBound - 1)..<(y.upperBound + 1))
    }

    /// A kept member's value, built as the strict parser builds it: the same checks as
    /// `skipValue`, a repeated member name refused, integers as `.int` when they fit in 64
    /// bits, other numbers as `.double`. Strings with an escape are decoded by the strict parser.
    private mutating func value(depth: Int) throws(Malformed) -> JSONValue {
        guard depth <= JSONValue.maximumDepth, i < b.count else { throw Malformed() }
        switch b[i] {
        case UInt8(ascii: "{"):
            i += 1
            var out: [String: JSONValue] = [:]
            skipWhitespace()
            if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return .object(out) }
            while true {
                skipWhitespace()
                guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw Malformed() }
                let key = try string()
                skipWhitespace()
                guard i < b.count, b[i] == UInt8(ascii: ":") else { throw Malformed() }
                i += 1
                skipWhitespace()
                if out.updateValue(try value(depth: depth + 1), forKey: key) != nil { throw Malformed() }
                guard try endOfMember(closing: UInt8(ascii: "}")) else { return .object(out) }
            }
        case UInt8(ascii: "["):
            i += 1
            var out: [JSONValue] = []
            skipWhitespace()
            if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return .array(out) }
            while true {
                skipWhitespace()
                out.append(try value(depth: depth + 1))
                guard try endOfMember(closing: UInt8(ascii: "]")) else { return .array(out) }
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try skipLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try skipLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try skipLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let start = i
            let isInteger = try skipNumber()
            let text = String(decoding: rebased(start..<i), as: UTF8.self)
            if isInteger, let n = Int64(text) { return .int(n) }
            guard let d = Double(text), d.isFinite else { throw Malformed() }
            return .double(d)
        default: throw Malformed()
        }
    }

    /// The string token at `i`: its bytes as they are when it has no escape (skipString
    /// validated them), else as the strict parser decodes it.
    private mutating func string() throws(Malformed) -> String {
        let start = i
        if try skipString() { return try decoded(start..<i) }
        return String(decoding: rebased((start + 1)..<(i - 1)), as: UTF8.self)
    }
}
