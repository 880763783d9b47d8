#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JSON

/// A forward scan of a JSON document in a buffer that checks what `JSONValue.parse` checks and
/// builds nothing (ResponseJSON builds the members it keeps).
struct JSONScanner {
    /// Why a document was refused; the caller only needs to know that it was.
    struct Malformed: Error {}

    let b: UnsafeBufferPointer<UInt8>
    var i = 0

    init(_ buffer: UnsafeBufferPointer<UInt8>) { b = buffer }

    func rebased(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: b[range]) }

    mutating func skipWhitespace() {
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
    }

    /// Any value, checked as the strict parser checks it (`depth` counted as it counts).
    mutating func skipValue(depth: Int) throws(Malformed) {
        guard depth <= JSONValue.maximumDepth, i < b.count else { throw Malformed() }
        switch b[i] {
        case UInt8(ascii: "{"):
            i += 1
            skipWhitespace()
            if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return }
            while true {
                skipWhitespace()
                guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw Malformed() }
                _ = try skipString()
                skipWhitespace()
                guard i < b.count, b[i] == UInt8(ascii: ":") else { throw Malformed() }
                i += 1
                skipWhitespace()
                try skipValue(depth: depth + 1)
                guard try endOfMember(closing: UInt8(ascii: "}")) else { return }
            }
        case UInt8(ascii: "["):
            i += 1
            skipWhitespace()
            if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return }
            while true {
                skipWhitespace()
                try skipValue(depth: depth + 1)
                guard try endOfMember(closing: UInt8(ascii: "]")) else { return }
            }
        case UInt8(ascii: "\""): _ = try skipString()
        case UInt8(ascii: "t"): try skipLiteral("true")
        case UInt8(ascii: "f"): try skipLiteral("false")
        case UInt8(ascii: "n"): try skipLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try skipNumber()
        default: throw Malformed()
        }
    }

    /// After a member or element: true after a comma (another follows), false after `closing`.
    mutating func endOfMember(closing: UInt8) throws(Malformed) -> Bool {
        skipWhitespace()
        guard i < b.count else { throw Malformed() }
        if b[i] == UInt8(ascii: ",") { i += 1; return true }
        guard b[i] == closing else { throw Malformed() }
        i += 1
        return false
    }

    mutating func skipLiteral(_ word: StaticString) throws(Malformed) {
        guard i + word.utf8CodeUnitCount <= b.count, memcmp(b.baseAddress! + i, word.utf8Start, word.utf8CodeUnitCount) == 0 else {
            throw Malformed()
        }
        i += word.utf8CodeUnitCount
    }

    /// RFC 8259 §6; like the strict parser, a number too large for a Double is refused.
    /// Returns whether it is written as an integer (no fraction, no exponent).
    mutating func skipNumber() throws(Malformed) -> Bool {
        let start = i
        var plainInteger = true
        if b[i] == UInt8(ascii: "-") { i += 1 }
        guard i < b.count else { throw Malformed() }
        if b[i] == UInt8(ascii: "0") {
            i += 1
        } else if isDigit(b[i]) {
            while i < b.count, isDigit(b[i]) { i += 1 }
        } else {
            throw Malformed()
        }
        if i < b.count, b[i] == UInt8(ascii: ".") {
            plainInteger = false
            i += 1
            guard i < b.count, isDigit(b[i]) else { throw Malformed() }
            while i < b.count, isDigit(b[i]) { i += 1 }
        }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            plainInteger = false
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            guard i < b.count, isDigit(b[i]) else { throw Malformed() }
            while i < b.count, isDigit(b[i]) { i += 1 }
        }
        // Up to 300 integer digits are finite; only longer ones and exponents need the conversion.
        if plainInteger && i - start < 300 { return true }
        guard let d = Double(String(decoding: rebased(start..<i), as: UTF8.self)), d.isFinite else { throw Malformed() }
        return plainInteger
    }

    func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    /// A string token from its opening quote, checked as the strict parser decodes it: no raw
    /// control byte, known escapes only, `\u` surrogates in pairs, and valid UTF-8 (validated
    /// per run between escapes: an escape decodes to whole scalars, so a sequence cut by one
    /// is invalid either way). Returns whether it contained an escape.
    mutating func skipString() throws(Malformed) -> Bool {
        i += 1
        if let quote = memchr(b.baseAddress! + i, 0x22, b.count - i) {
            // Most strings have no escape: then the first quote ends them, and one pass without
            // a branch per word checks the run before it (501,600 -> 489,800 instructions per SD-JWT
            // flow against the stepwise search below alone, callgrind).
            let end = b.baseAddress!.distance(to: quote.assumingMemoryBound(to: UInt8.self))
            let (plain, ascii) = plainRun(i..<end)
            if plain {
                if !ascii, String(validating: rebased(i..<end), as: UTF8.self) == nil { throw Malformed() }
                i = end + 1
                return false
            }
        }
        var escaped = false
        while true {
            let (end, ascii) = nextSpecial(from: i)
            if !ascii, String(validating: rebased(i..<end), as: UTF8.self) == nil { throw Malformed() }
            i = end
            guard i < b.count, b[i] >= 0x20 else { throw Malformed() }
            if b[i] == UInt8(ascii: "\"") {
                i += 1
                return escaped
            }
            escaped = true
            i += 1
            guard i < b.count else { throw Malformed() }
            let e = b[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                 UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                continue
            case UInt8(ascii: "u"):
                let scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 1 < b.count, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") else { throw Malformed() }
                    i += 2
                    guard (0xDC00...0xDFFF).contains(try hex4()) else { throw Malformed() }
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw Malformed()
                }
            default: throw Malformed()
            }
        }
    }

    mutating func hex4() throws(Malformed) -> UInt32 {
        guard i + 4 <= b.count else { throw Malformed() }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = b[i]
            let d: UInt8
            switch c {
            case 0x30...0x39: d = c - 0x30
            case 0x41...0x46: d = c - 0x41 + 10
            case 0x61...0x66: d = c - 0x61 + 10
            default: throw Malformed()
            }
            v = v << 4 | UInt32(d)
            i += 1
        }
        return v
    }

    /// The index of the first quote, backslash or byte below 0x20 at or after `from` (or the
    /// end), and whether all bytes before it are ASCII: eight bytes per step (the SWAR tests of
    /// the JSON target's parser), as a portrait or a compact JWT is kilobytes without one.
    func nextSpecial(from: Int) -> (Int, ascii: Bool) {
        var j = from
        var seen: UInt64 = 0
        // Two words per test while neither has one: the 11 KB credential string and the 3.7 KB
        // token response are almost all plain (530,600 instructions per SD-JWT flow against
        // 547,600 one word at a time, callgrind).
        while j + 16 <= b.count {
            let at = UnsafeRawPointer(b.baseAddress! + j)
            let w0 = at.loadUnaligned(as: UInt64.self), w1 = at.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            if Self.special(w0) | Self.special(w1) != 0 { break }
            seen |= w0 | w1
            j += 16
        }
        while j + 8 <= b.count {
            let w = UnsafeRawPointer(b.baseAddress! + j).loadUnaligned(as: UInt64.self)
            if Self.special(w) != 0 { break }
            seen |= w
            j += 8
        }
        while j < b.count {
            let c = b[j]
            if c == 0x22 || c == 0x5C || c < 0x20 { break }
            seen |= UInt64(c)
            j += 1
        }
        return (j, seen & 0x8080_8080_8080_8080 == 0)
    }

    /// Whether `range` holds no quote, backslash or byte below 0x20, and whether it is ASCII:
    /// every word is tested and the results OR-ed, a loop without an exit that the compiler
    /// vectorizes.
    func plainRun(_ range: Range<Int>) -> (plain: Bool, ascii: Bool) {
        let raw = UnsafeRawPointer(b.baseAddress! + range.lowerBound)
        let words = range.count / 8
        var special: UInt64 = 0, seen: UInt64 = 0
        for w in 0..<words {
            let word = raw.loadUnaligned(fromByteOffset: w * 8, as: UInt64.self)
            special |= Self.special(word)
            seen |= word
        }
        for j in (range.lowerBound + words * 8)..<range.upperBound {
            let c = b[j]
            if c == 0x22 || c == 0x5C || c < 0x20 { special = 1 }
            seen |= UInt64(c)
        }
        return (special == 0, seen & 0x8080_8080_8080_8080 == 0)
    }

    /// Non-zero when a byte of `w` is a quote, a backslash or below 0x20 (exact for the word
    /// as a whole: a borrow can only follow a byte that is one).
    @inline(__always)
    private static func special(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quote = w ^ (ones &* 0x22), backslash = w ^ (ones &* 0x5C)
        return ((w &- ones &* 0x20) & ~w | (quote &- ones) & ~quote | (backslash &- ones) & ~backslash) & highs
    }
}
