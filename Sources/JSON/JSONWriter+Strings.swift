/// String encoding for `JSONWriter` (RFC 8259 §7), the part of writing JSON that sees the most
/// bytes: compact JWTs, base64url mdocs and portraits are kilobytes long and almost never need an
/// escape, so plain runs are found a word at a time and copied whole.
extension JSONWriter {
    /// RFC 8259 §7: quote, backslash and control characters escaped; everything else, non-ASCII
    /// included, written as its UTF-8 bytes.
    static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            // Almost every string (names, base64url, URLs, dates) needs no escape: one OR-ed
            // pass over its words, then a single copy, cheaper for short strings than the
            // stepwise scan below (docs/performance.md, the JSON writer).
            if needsNoEscape(bytes) {
                out.append(contentsOf: bytes)
                return
            }
            var runStart = 0
            var i = 0
            while i < bytes.count {
                // Sixteen, then eight bytes at a time while none needs an escape: long values
                // (compact JWTs, base64 portraits and certificates) are almost all plain, and
                // one test covers two words.
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
    /// are OR-ed and tested once at the end, a loop the compiler vectorizes (a branch per word
    /// costs several times more on a kilobytes-long SD-JWT).
    static func needsNoEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
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

    static func needsNoEscape(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { needsNoEscape($0) }
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
