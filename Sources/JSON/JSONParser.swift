/// Errors from parsing untrusted JSON. The position is a byte offset, for error descriptions.
public enum JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    case unexpectedEnd
    case unexpectedByte(offset: Int)
    case invalidNumber(offset: Int)
    case invalidString(offset: Int)
    case tooDeep
    case duplicateKey(String)
    case trailingData(offset: Int)

    public var description: String {
        switch self {
        case .unexpectedEnd: return "unexpected end of JSON"
        case .unexpectedByte(let o): return "unexpected character at offset \(o)"
        case .invalidNumber(let o): return "invalid number at offset \(o)"
        case .invalidString(let o): return "invalid string at offset \(o)"
        case .tooDeep: return "JSON nested too deeply"
        case .duplicateKey(let k): return "duplicate member \"\(k)\""
        case .trailingData(let o): return "trailing data at offset \(o)"
        }
    }
}

extension JSONValue {
    /// Nesting bound: deeper documents are refused instead of exhausting the stack.
    public static let maximumDepth = 64

    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// Strict RFC 8259 parser. Duplicate member names are rejected because JOSE (RFC 7515 §5.2)
    /// requires it for headers and an ambiguous payload is a classic signature-bypass trick.
    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        var p = Parser(bytes: bytes)
        p.skipWhitespace()
        let v = try p.parseValue(depth: 0)
        p.skipWhitespace()
        if p.i != bytes.count { throw .trailingData(offset: p.i) }
        return v
    }
}

extension JSONValue {
    /// The members named in `keeping` of the JSON object `bytes`, built as `parse` builds them;
    /// the others are checked exactly as `parse` checks them (grammar, escapes, UTF-8, numbers,
    /// depth, repeated member names at any level) but not built. For a client that reads a few
    /// members of a large response (the load client's token response carries kilobytes of
    /// `credential_previews` it never reads, and building them was most of its parsing; measured:
    /// see docs/performance.md). Throws what `parse` would throw, and `unexpectedByte` when the
    /// document is not an object.
    public static func parseObject(_ bytes: [UInt8], keeping names: Set<String>) throws(JSONParseError) -> [String: JSONValue] {
        var p = Parser(bytes: bytes)
        p.skipWhitespace()
        guard p.i < bytes.count else { throw .unexpectedEnd }
        guard bytes[p.i] == UInt8(ascii: "{") else { throw .unexpectedByte(offset: p.i) }
        var kept: [String: JSONValue] = [:]
        var seen = MemberNames()
        try p.members { (p: inout Parser, key: String) throws(JSONParseError) in
            if names.contains(key) { kept[key] = try p.parseValue(depth: 1) } else { try p.skipValue(depth: 1) }
            if !seen.insert(key) { throw .duplicateKey(key) }
        }
        p.skipWhitespace()
        if p.i != bytes.count { throw .trailingData(offset: p.i) }
        return kept
    }
}

/// The member names an unbuilt object has had, for refusing a repeated one: a list while short
/// (most objects hold a few names, and comparing a few is cheaper than hashing each into a
/// Set), a Set past that, so a huge object stays linear.
private struct MemberNames {
    private var list: [String] = []
    private var set: Set<String>?

    /// False when `name` was there already.
    mutating func insert(_ name: String) -> Bool {
        if set != nil { return set!.insert(name).inserted }
        if list.contains(name) { return false }
        list.append(name)
        if list.count > 16 { set = Set(list); list = [] }
        return true
    }
}

private struct Parser {
    let bytes: [UInt8]
    var i = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func skipWhitespace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= JSONValue.maximumDepth else { throw .tooDeep }
        guard i < bytes.count else { throw .unexpectedEnd }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw .unexpectedByte(offset: i)
        }
    }

    mutating func literal(_ word: String) throws(JSONParseError) {
        for b in word.utf8 {
            guard i < bytes.count else { throw .unexpectedEnd }
            guard bytes[i] == b else { throw .unexpectedByte(offset: i) }
            i += 1
        }
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        var out: [String: JSONValue] = [:]
        try members { (p: inout Parser, key: String) throws(JSONParseError) in
            if out.updateValue(try p.parseValue(depth: depth + 1), forKey: key) != nil { throw .duplicateKey(key) }
        }
        return .object(out)
    }

    /// The members of the object at `i` (its `{`): each name is handed to `value`, which reads
    /// the value and refuses a name the object already had.
    mutating func members(_ value: (inout Parser, String) throws(JSONParseError) -> Void) throws(JSONParseError) {
        i += 1
        skipWhitespace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return }
        while true {
            skipWhitespace()
            guard i < bytes.count else { throw .unexpectedEnd }
            guard bytes[i] == UInt8(ascii: "\"") else { throw .unexpectedByte(offset: i) }
            let key = try parseString()
            skipWhitespace()
            guard i < bytes.count else { throw .unexpectedEnd }
            guard bytes[i] == UInt8(ascii: ":") else { throw .unexpectedByte(offset: i) }
            i += 1
            skipWhitespace()
            try value(&self, key)
            skipWhitespace()
            guard i < bytes.count else { throw .unexpectedEnd }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; return }
            throw .unexpectedByte(offset: i)
        }
    }

    /// Checks the value at `i` as `parseValue` does without building its containers; strings,
    /// numbers and literals go through the building code, which is where their checks are.
    mutating func skipValue(depth: Int) throws(JSONParseError) {
        guard depth <= JSONValue.maximumDepth else { throw .tooDeep }
        guard i < bytes.count else { throw .unexpectedEnd }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            var names = MemberNames()
            try members { (p: inout Parser, key: String) throws(JSONParseError) in
                try p.skipValue(depth: depth + 1)
                if !names.insert(key) { throw .duplicateKey(key) }
            }
        case UInt8(ascii: "["):
            i += 1
            skipWhitespace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return }
            while true {
                skipWhitespace()
                try skipValue(depth: depth + 1)
                skipWhitespace()
                guard i < bytes.count else { throw .unexpectedEnd }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "]") { i += 1; return }
                throw .unexpectedByte(offset: i)
            }
        case UInt8(ascii: "\""):
            _ = try parseString()
        default:
            _ = try parseValue(depth: depth)
        }
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        i += 1
        var out: [JSONValue] = []
        skipWhitespace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(out) }
        while true {
            skipWhitespace()
            out.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard i < bytes.count else { throw .unexpectedEnd }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(out) }
            throw .unexpectedByte(offset: i)
        }
    }

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = i
        var isInteger = true
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count else { throw .invalidNumber(offset: start) }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
        } else if isDigit(bytes[i]) {
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        } else {
            throw .invalidNumber(offset: start)
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            guard i < bytes.count, isDigit(bytes[i]) else { throw .invalidNumber(offset: start) }
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            isInteger = false
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard i < bytes.count, isDigit(bytes[i]) else { throw .invalidNumber(offset: start) }
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if isInteger, let v = Int64(text) { return .int(v) }
        guard let d = Double(text), d.isFinite else { throw .invalidNumber(offset: start) }
        return .double(d)
    }

    func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    mutating func parseString() throws(JSONParseError) -> String {
        let start = i
        i += 1
        // Most strings hold no escape: find the first quote, backslash or control byte eight bytes
        // at a time, and when it is the closing quote make the String from the bytes in one go,
        // validating the UTF-8 once. Only a backslash takes the copying path below.
        let contentStart = i
        let (end, ascii) = bytes.withUnsafeBufferPointer { Self.firstSpecial(in: $0, from: contentStart) }
        i = end
        if i < bytes.count, bytes[i] == UInt8(ascii: "\"") {
            // ASCII needs no validation; String(validating:) is generic and costs a metadata lookup.
            let s = bytes.withUnsafeBufferPointer {
                ascii ? String(decoding: UnsafeBufferPointer(rebasing: $0[contentStart..<end]), as: UTF8.self)
                    : String(validating: UnsafeBufferPointer(rebasing: $0[contentStart..<end]), as: UTF8.self)
            }
            guard let s else { throw .invalidString(offset: start) }
            i += 1
            return s
        }
        var out = Array(bytes[contentStart..<i])
        while true {
            guard i < bytes.count else { throw .unexpectedEnd }
            let b = bytes[i]
            if b == UInt8(ascii: "\"") { i += 1; break }
            if b < 0x20 { throw .invalidString(offset: i) }
            if b != UInt8(ascii: "\\") {
                // The run up to the next quote, backslash or control byte, copied at once rather
                // than byte by byte: long strings (a preview's base64 portrait) are mostly plain.
                let end = bytes.withUnsafeBufferPointer { Self.firstSpecial(in: $0, from: i).index }
                out.append(contentsOf: bytes[i..<end])
                i = end
                continue
            }
            i += 1
            guard i < bytes.count else { throw .unexpectedEnd }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                        throw .invalidString(offset: i)
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw .invalidString(offset: i) }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw .invalidString(offset: i)
                }
                guard let u = Unicode.Scalar(scalar) else { throw .invalidString(offset: i) }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default: throw .invalidString(offset: i - 1)
            }
        }
        // Invalid UTF-8 is refused rather than silently repaired: a repaired string would not
        // match the bytes that were signed.
        guard let s = String(validating: out, as: UTF8.self) else { throw .invalidString(offset: start) }
        return s
    }

    /// The index of the first `"`, `\\` or byte below 0x20 at or after `from` (or the end), and
    /// whether every byte before it is ASCII.
    static func firstSpecial(in buffer: UnsafeBufferPointer<UInt8>, from: Int) -> (index: Int, ascii: Bool) {
        var j = from
        var seen: UInt64 = 0
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        // A word holds a special byte when some byte is below 0x20, or is zero after the XOR with
        // the quote or the backslash: the classic SWAR tests, exact for the word as a whole.
        while j + 8 <= buffer.count {
            let w = UnsafeRawPointer(buffer.baseAddress! + j).loadUnaligned(as: UInt64.self)
            let quote = w ^ (ones &* 0x22), backslash = w ^ (ones &* 0x5C)
            let below = (w &- ones &* 0x20) & ~w, isQuote = (quote &- ones) & ~quote, isBackslash = (backslash &- ones) & ~backslash
            if (below | isQuote | isBackslash) & highs != 0 { break }
            seen |= w
            j += 8
        }
        while j < buffer.count {
            let b = buffer[j]
            if b == 0x22 || b == 0x5C || b < 0x20 { break }
            seen |= UInt64(b)
            j += 1
        }
        return (j, seen & highs == 0)
    }

    mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard i + 4 <= bytes.count else { throw .unexpectedEnd }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[i]
            let d: UInt32
            switch b {
            case 0x30...0x39: d = UInt32(b - 0x30)
            case 0x41...0x46: d = UInt32(b - 0x41 + 10)
            case 0x61...0x66: d = UInt32(b - 0x61 + 10)
            default: throw .invalidString(offset: i)
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }
}
