/// Why untrusted bytes are not one well-formed CBOR data item. Offsets are byte positions, for
/// error descriptions.
public enum CBORDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    case unexpectedEnd
    /// Additional information 28–30 (reserved), or 31 where no indefinite length is allowed.
    case invalidHead(offset: Int)
    /// A declared length or element count larger than the rest of the input could hold.
    case lengthBeyondInput(offset: Int)
    /// A chunk of an indefinite-length string that is not a definite string of the same type.
    case invalidChunk(offset: Int)
    /// A "break" (0xff) outside an indefinite-length item.
    case unexpectedBreak(offset: Int)
    /// A one-byte simple value below 32 (RFC 8949 §3.3: not well-formed).
    case invalidSimpleValue(offset: Int)
    case invalidUTF8(offset: Int)
    case duplicateKey(offset: Int)
    case tooDeep
    case trailingData(offset: Int)

    public var description: String {
        switch self {
        case .unexpectedEnd: return "unexpected end of CBOR"
        case .invalidHead(let o): return "invalid initial byte at offset \(o)"
        case .lengthBeyondInput(let o): return "length beyond the input at offset \(o)"
        case .invalidChunk(let o): return "invalid indefinite-length string chunk at offset \(o)"
        case .unexpectedBreak(let o): return "unexpected break at offset \(o)"
        case .invalidSimpleValue(let o): return "invalid simple value at offset \(o)"
        case .invalidUTF8(let o): return "invalid UTF-8 in text string at offset \(o)"
        case .duplicateKey(let o): return "duplicate map key at offset \(o)"
        case .tooDeep: return "CBOR nested too deeply"
        case .trailingData(let o): return "trailing data at offset \(o)"
        }
    }
}

extension CBORValue {
    /// Nesting bound (arrays, maps and tags): deeper items are refused instead of exhausting
    /// the stack. An mdoc nests about ten levels.
    public static let maximumDepth = 64

    /// Strict decoder for exactly one data item (RFC 8949 §3, §5.3.1 validity). Definite and
    /// indefinite lengths are both accepted, since senders need not use deterministic encoding;
    /// duplicate map keys and invalid UTF-8 are refused, as an ambiguous or repaired value would
    /// not be what was signed.
    public static func decode(_ bytes: [UInt8]) throws(CBORDecodingError) -> CBORValue {
        var d = Decoder(bytes: bytes)
        let v = try d.decodeItem(depth: 0)
        if d.i != bytes.count { throw .trailingData(offset: d.i) }
        return v
    }
}

private struct Decoder {
    let bytes: [UInt8]
    var i = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    var remaining: Int { bytes.count - i }

    /// The argument of a head with additional information `info` (§3.1); nil for 31.
    mutating func argument(_ info: UInt8, headOffset: Int) throws(CBORDecodingError) -> UInt64? {
        switch info {
        case 0...23: return UInt64(info)
        case 24...27:
            let size = 1 << Int(info - 24)
            guard remaining >= size else { throw .unexpectedEnd }
            var v: UInt64 = 0
            for _ in 0..<size { v = v << 8 | UInt64(bytes[i]); i += 1 }
            return v
        case 31: return nil
        default: throw .invalidHead(offset: headOffset)
        }
    }

    /// A length that must fit in what is left, each unit taking at least `unit` bytes; checked
    /// before anything is allocated, so a forged huge length costs nothing.
    func length(_ n: UInt64, unit: Int, headOffset: Int) throws(CBORDecodingError) -> Int {
        guard n <= UInt64(remaining / unit) else { throw .lengthBeyondInput(offset: headOffset) }
        return Int(n)
    }

    mutating func decodeItem(depth: Int) throws(CBORDecodingError) -> CBORValue {
        guard depth <= CBORValue.maximumDepth else { throw .tooDeep }
        guard i < bytes.count else { throw .unexpectedEnd }
        let start = i
        let initial = bytes[i]
        i += 1
        let major = initial >> 5
        let info = initial & 0x1f
        if major == 7 { return try decodeSimple(info, headOffset: start) }
        let arg = try argument(info, headOffset: start)
        switch major {
        case 0:
            guard let arg else { throw .invalidHead(offset: start) }
            return .unsigned(arg)
        case 1:
            guard let arg else { throw .invalidHead(offset: start) }
            return .negative(arg)
        case 2:
            return .bytes(try stringBytes(major: 2, length: arg, headOffset: start))
        case 3:
            return .text(try text(length: arg, headOffset: start))
        case 4:
            var out: [CBORValue] = []
            if let arg {
                out.reserveCapacity(try length(arg, unit: 1, headOffset: start))
                for _ in 0..<arg { out.append(try decodeItem(depth: depth + 1)) }
            } else {
                while try !atBreak() { out.append(try decodeItem(depth: depth + 1)) }
            }
            return .array(out)
        case 5:
            var out: [CBORMapEntry] = []
            var seen = Set<CBORValue>()
            func add(_ d: inout Decoder) throws(CBORDecodingError) {
                let keyOffset = d.i
                let key = try d.decodeItem(depth: depth + 1)
                let value = try d.decodeItem(depth: depth + 1)
                guard seen.insert(key).inserted else { throw .duplicateKey(offset: keyOffset) }
                out.append(CBORMapEntry(key, value))
            }
            if let arg {
                out.reserveCapacity(try length(arg, unit: 2, headOffset: start))
                for _ in 0..<arg { try add(&self) }
            } else {
                while try !atBreak() { try add(&self) }
            }
            return .map(out)
        default: // 6
            guard let arg else { throw .invalidHead(offset: start) }
            return .tagged(arg, try decodeItem(depth: depth + 1))
        }
    }

    /// Consumes a break byte if one is next; otherwise leaves the input alone.
    mutating func atBreak() throws(CBORDecodingError) -> Bool {
        guard i < bytes.count else { throw .unexpectedEnd }
        if bytes[i] == 0xff { i += 1; return true }
        return false
    }

    /// Byte or text string content. An indefinite string is a sequence of definite chunks of
    /// the same major type (§3.2.3), concatenated.
    mutating func stringBytes(major: UInt8, length n: UInt64?, headOffset: Int) throws(CBORDecodingError) -> [UInt8] {
        if let n {
            let count = try length(n, unit: 1, headOffset: headOffset)
            defer { i += count }
            return Array(bytes[i..<i + count])
        }
        var out: [UInt8] = []
        while try !atBreak() {
            let chunkOffset = i
            let initial = bytes[i]
            i += 1
            guard initial >> 5 == major, let arg = try argument(initial & 0x1f, headOffset: chunkOffset)
            else { throw .invalidChunk(offset: chunkOffset) }
            let chunk = try stringBytes(major: major, length: arg, headOffset: chunkOffset)
            // Each text chunk must itself be valid UTF-8: a character may not straddle chunks.
            if major == 3, String(validating: chunk, as: UTF8.self) == nil { throw .invalidUTF8(offset: chunkOffset) }
            out += chunk
        }
        return out
    }

    mutating func text(length n: UInt64?, headOffset: Int) throws(CBORDecodingError) -> String {
        let raw = try stringBytes(major: 3, length: n, headOffset: headOffset)
        guard let s = String(validating: raw, as: UTF8.self) else { throw .invalidUTF8(offset: headOffset) }
        return s
    }

    mutating func decodeSimple(_ info: UInt8, headOffset: Int) throws(CBORDecodingError) -> CBORValue {
        switch info {
        case 0...19: return .simple(info)
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        case 23: return .undefined
        case 24:
            guard i < bytes.count else { throw .unexpectedEnd }
            let v = bytes[i]
            i += 1
            guard v >= 32 else { throw .invalidSimpleValue(offset: headOffset) }
            return .simple(v)
        case 25, 26, 27:
            let bits = try argument(info, headOffset: headOffset)!
            switch info {
            case 25: return .float(CBORFloat.double(fromHalf: UInt16(bits)))
            case 26: return .float(Double(Float(bitPattern: UInt32(bits))))
            default: return .float(Double(bitPattern: bits))
            }
        case 31: throw .unexpectedBreak(offset: headOffset)
        default: throw .invalidHead(offset: headOffset)
        }
    }
}
