/// A CBOR data item (RFC 8949 §3). Maps keep their pairs in order, so a decoded map can be
/// inspected as it was sent; the encoder sorts keys anyway (§4.2.1), so two maps with the same
/// pairs in a different order encode to the same bytes.
///
/// Floating-point values of any width decode to `.float(Double)`; the encoder picks the shortest
/// width that represents the value exactly, as preferred serialization requires (§4.1).
///
/// Equality is structural: maps compare their pairs in order, and floats compare as Doubles
/// (0.0 == -0.0, NaN != NaN). Compare `encoded()` bytes to ask whether two maps are the same
/// data item regardless of order.
public enum CBORValue: Hashable, Sendable {
    /// Major type 0.
    case unsigned(UInt64)
    /// Major type 1: the value is `-1 - n`, so the whole range down to -2^64 fits.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    case map([CBORMapEntry])
    indirect case tagged(UInt64, CBORValue)
    /// Simple values other than false, true, null and undefined (0...19 and 32...255).
    case simple(UInt8)
    case bool(Bool)
    case null
    case undefined
    case float(Double)
}

/// One key/value pair of a CBOR map.
public struct CBORMapEntry: Hashable, Sendable {
    public var key: CBORValue
    public var value: CBORValue

    public init(_ key: CBORValue, _ value: CBORValue) {
        self.key = key
        self.value = value
    }
}

extension CBORValue {
    /// An integer of either sign.
    public init(_ int: Int64) {
        self = int >= 0 ? .unsigned(UInt64(int)) : .negative(UInt64(-1 - int))
    }

    public init(_ int: Int) { self.init(Int64(int)) }

    /// An integer, when it fits in Int64 (major types 0 and 1 only, never a float).
    public var intValue: Int64? {
        switch self {
        case .unsigned(let u) where u <= UInt64(Int64.max): return Int64(u)
        case .negative(let n) where n <= UInt64(Int64.max): return -1 - Int64(n)
        default: return nil
        }
    }

    public var uintValue: UInt64? { if case .unsigned(let u) = self { return u } else { return nil } }
    public var bytesValue: [UInt8]? { if case .bytes(let b) = self { return b } else { return nil } }
    public var textValue: String? { if case .text(let s) = self { return s } else { return nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    public var arrayValue: [CBORValue]? { if case .array(let a) = self { return a } else { return nil } }
    public var mapValue: [CBORMapEntry]? { if case .map(let m) = self { return m } else { return nil } }
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    public var doubleValue: Double? {
        switch self {
        case .float(let d): return d
        default: return intValue.map(Double.init)
        }
    }

    /// The tag number and content of a tagged item.
    public var taggedValue: (tag: UInt64, value: CBORValue)? {
        if case .tagged(let tag, let value) = self { return (tag, value) } else { return nil }
    }

    /// The value of the first entry whose key equals `key`; nil when absent or not a map.
    /// Keys compare as data items, so `1` and `"1"` are different keys.
    public subscript(key: CBORValue) -> CBORValue? {
        mapValue?.first(where: { $0.key == key })?.value
    }

    /// The CBOR type name, for error messages.
    public var typeName: String {
        switch self {
        case .unsigned, .negative: return "integer"
        case .bytes: return "byte string"
        case .text: return "text string"
        case .array: return "array"
        case .map: return "map"
        case .tagged(let tag, _): return "tag \(tag)"
        case .simple: return "simple value"
        case .bool: return "boolean"
        case .null: return "null"
        case .undefined: return "undefined"
        case .float: return "float"
        }
    }
}

extension CBORValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self.init(value) }
    public init(floatLiteral value: Double) { self = .float(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(arrayLiteral elements: CBORValue...) { self = .array(elements) }
    /// Keeps the literal's order (a dictionary literal is an ordered list of pairs).
    public init(dictionaryLiteral elements: (CBORValue, CBORValue)...) {
        self = .map(elements.map { CBORMapEntry($0.0, $0.1) })
    }
}

extension CBORValue: CustomStringConvertible {
    /// Diagnostic notation (RFC 8949 §8), for error messages and test failures.
    public var description: String {
        switch self {
        case .unsigned(let u): return String(u)
        case .negative(let n): return n == .max ? "-18446744073709551616" : "-" + String(n + 1)
        case .bytes(let b):
            let hex = "0123456789abcdef".map { $0 }
            return "h'" + String(b.flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 0xf)]] }) + "'"
        case .text(let s): return "\"" + s.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"") + "\""
        case .array(let a): return "[" + a.map(\.description).joined(separator: ", ") + "]"
        case .map(let m): return "{" + m.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .tagged(let tag, let v): return "\(tag)(\(v))"
        case .simple(let v): return "simple(\(v))"
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .undefined: return "undefined"
        case .float(let d):
            if d.isNaN { return "NaN" }
            if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
            return "\(d)"
        }
    }
}

extension String {
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
