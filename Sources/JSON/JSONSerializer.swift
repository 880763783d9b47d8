extension JSONValue {
    /// Compact serialization with sorted object keys and no escaped slashes, so URLs in
    /// statements read as they are and two runs sign identical bytes.
    public func serialized(pretty: Bool = false) -> String {
        String(decoding: encoded(pretty: pretty), as: UTF8.self)
    }

    public var bytes: [UInt8] { encoded(pretty: false) }

    /// The UTF-8 bytes of `serialized(pretty:)`. Written as bytes, with runs that need no escape
    /// copied whole: a resolve response (a few KB of compact JWTs) spent a sixth of its time
    /// appending to a String one scalar at a time.
    public func encoded(pretty: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out, pretty: pretty, indent: 0)
        return out
    }

    /// Appends the compact serialization (the bytes of `bytes`) to `out`, for a caller that
    /// assembles a larger text around values (an SD-JWT disclosure) without a buffer per value.
    public func encode(appendingTo out: inout [UInt8]) {
        write(to: &out, pretty: false, indent: 0)
    }

    /// Appends `string` as a JSON string (quoted and escaped exactly as the serializer writes it).
    public static func encodeString(_ string: String, appendingTo out: inout [UInt8]) {
        writeString(string, to: &out)
    }

    private func write(to out: inout [UInt8], pretty: Bool, indent: Int) {
        switch self {
        case .null: out += Self.nullBytes
        case .bool(let b): out += b ? Self.trueBytes : Self.falseBytes
        case .int(let i): out += String(i).utf8
        case .double(let d):
            if d.rounded() == d, abs(d) < 1e15 { out += String(Int64(d)).utf8 } else { out += "\(d)".utf8 }
        case .string(let s): Self.writeString(s, to: &out)
        case .array(let a):
            if a.isEmpty { out += [UInt8(ascii: "["), UInt8(ascii: "]")]; return }
            out.append(UInt8(ascii: "["))
            for (n, v) in a.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { Self.newline(&out, indent + 1) }
                v.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { Self.newline(&out, indent) }
            out.append(UInt8(ascii: "]"))
        case .object(let o):
            if o.isEmpty { out += [UInt8(ascii: "{"), UInt8(ascii: "}")]; return }
            out.append(UInt8(ascii: "{"))
            // Members sorted with their values, so no key is hashed and looked up again.
            for (n, member) in o.sorted(by: { $0.key < $1.key }).enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { Self.newline(&out, indent + 1) }
                Self.writeString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(UInt8(ascii: " ")) }
                member.value.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { Self.newline(&out, indent) }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let nullBytes = Array("null".utf8)
    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)

    private static func newline(_ out: inout [UInt8], _ indent: Int) {
        out.append(UInt8(ascii: "\n"))
        out += repeatElement(UInt8(ascii: " "), count: 2 * indent)
    }

    /// RFC 8259 §7: quote, backslash and control characters escaped; everything else, non-ASCII
    /// included, written as its UTF-8 bytes.
    private static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            // Almost every string (names, base64url, URLs, dates) needs no escape: one OR-ed
            // pass over its words, then a single copy, cheaper for these than the stepwise tests
            // below (measured: see docs/performance.md).
            if needsNoEscape(bytes) {
                out.append(contentsOf: bytes)
                return
            }
            var runStart = 0
            var i = 0
            while i < bytes.count {
                // Sixteen, then eight bytes at a time while none needs an escape: long values
                // (compact JWTs, base64 portraits and certificates) are almost all plain, and
                // the sixteen-byte step tests two words at once (a resolve response carries
                // kilobytes of JWTs).
                if i + 16 <= bytes.count {
                    let at = UnsafeRawPointer(bytes.baseAddress! + i)
                    if escapes(at.loadUnaligned(as: UInt64.self)) | escapes(at.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) == 0 {
                        i += 16
                        continue
                    }
                }
                if i + 8 <= bytes.count, escapes(UnsafeRawPointer(bytes.baseAddress! + i).loadUnaligned(as: UInt64.self)) == 0 {
                    i += 8
                    continue
                }
                let b = bytes[i]
                i += 1
                guard b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") else { continue }
                let escapeAt = i - 1
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<escapeAt]))
                runStart = i
                switch b {
                case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
                case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
                case UInt8(ascii: "\n"): out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                case UInt8(ascii: "\r"): out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
                case UInt8(ascii: "\t"): out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(b >> 4)], hex[Int(b & 15)]]
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether the string is written as itself between quotes: no quote, backslash or control
    /// character (RFC 8259 §7). Callers that assemble JSON around long plain values (compact
    /// JWTs, base64url) test with this instead of copying them through `writeString`. The words
    /// are OR-ed and tested once at the end, a loop the compiler vectorizes, where a branch per
    /// word would not be (an SD-JWT is kilobytes long).
    public static func needsNoEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var found: UInt64 = 0
        let words = bytes.count / 8
        if words > 0 {
            let raw = UnsafeRawPointer(bytes.baseAddress!)
            for w in 0..<words { found |= escapes(raw.loadUnaligned(fromByteOffset: w * 8, as: UInt64.self)) }
        }
        guard found == 0 else { return false }
        for b in bytes[(words * 8)...] where b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") { return false }
        return true
    }

    public static func needsNoEscape(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { needsNoEscape($0) }
    }

    /// `{"name":"value",...}`, the bytes `JSONValue.object` of these string members serializes
    /// to, for members given in the serializer's order (sorted by name); nil when a name or a
    /// value needs an escape. For small fixed objects built per signature (a JWS header, an
    /// RFC 7638 thumbprint input) without making a dictionary and sorting it.
    public static func plainStringObject(_ members: [(name: String, value: String)]) -> [UInt8]? {
        assert(zip(members, members.dropFirst()).allSatisfy { $0.name < $1.name }, "members must be sorted by name")
        var out: [UInt8] = []
        out.reserveCapacity(members.reduce(2) { $0 + $1.name.utf8.count + $1.value.utf8.count + 6 })
        out.append(UInt8(ascii: "{"))
        for (i, member) in members.enumerated() {
            guard needsNoEscape(member.name), needsNoEscape(member.value) else { return nil }
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            out += member.name.utf8
            out += #"":""#.utf8
            out += member.value.utf8
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Non-zero when any of the eight bytes in `word` is below 0x20, a quote or a backslash. The
    /// classic SWAR tests: `x - 0x01…` borrows into bit 7 of a byte that was zero (after
    /// XOR with the character) or, for `word - 0x20…`, of a byte below 0x20; `& ~x` drops bytes
    /// that had bit 7 set already (UTF-8 continuation and lead bytes never need escaping).
    @inline(__always)
    private static func escapes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
        let control = (word &- ones &* 0x20) & ~word
        let zeroQuote = (quote &- ones) & ~quote
        let zeroBackslash = (backslash &- ones) & ~backslash
        return (control | zeroQuote | zeroBackslash) & highs
    }
}

extension JSONValue: CustomStringConvertible {
    public var description: String { serialized() }
}
