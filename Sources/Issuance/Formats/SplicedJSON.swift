import JSON

/// A JSON response body whose few large values are serialized once (or, for strings that need
/// no escape, not at all) and copied into the small rest. The credential response carries a
/// 7 KB SD-JWT and the token response a 3 KB claims preview (prepared once per persona and
/// day); copying them instead of writing them through the JSON writer took the server from
/// 3.972M to 3.907M instructions per SD-JWT flow (callgrind, issuance-callgrind.sh, the
/// credential response's serialization alone was 76,000). The bytes are exactly `value.bytes`: the
/// rest is serialized by the JSON writer around markers, and a fragment's text is its value's
/// own serialization (compact output does not depend on nesting).
struct SplicedJSON {
    /// One value and its JSON text.
    struct Fragment: Sendable {
        let value: JSONValue
        let text: [UInt8]

        init(_ value: JSONValue) {
            self.value = value
            text = value.bytes
        }

        /// A string that is expected to need no escape (a compact JWS or SD-JWT, base64url):
        /// quoted as it is when it indeed has no quote, backslash or control character (checked
        /// eight bytes at a time), else serialized by the JSON writer.
        init(string: String) {
            value = .string(string)
            var s = string
            if let quoted = s.withUTF8({ Self.quotedIfPlain($0) }) {
                text = quoted
            } else {
                text = value.bytes
            }
        }

        private static func quotedIfPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
            // One test at the end rather than a branch per word: the loop is then plain
            // arithmetic the compiler vectorizes (31,000 instructions for a 7 KB SD-JWT with a
            // branch per word, callgrind).
            var found: UInt64 = 0
            var i = 0
            let words = bytes.count / 8
            if words > 0 {
                let raw = UnsafeRawPointer(bytes.baseAddress!)
                for w in 0..<words { found |= escapeBits(raw.loadUnaligned(fromByteOffset: w * 8, as: UInt64.self)) }
                i = words * 8
            }
            if found != 0 { return nil }
            while i < bytes.count {
                let b = bytes[i]
                if b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") { return nil }
                i += 1
            }
            return [UInt8](unsafeUninitializedCapacity: bytes.count + 2) { out, count in
                out[0] = UInt8(ascii: "\"")
                if let base = bytes.baseAddress { (out.baseAddress! + 1).initialize(from: base, count: bytes.count) }
                out[bytes.count + 1] = UInt8(ascii: "\"")
                count = bytes.count + 2
            }
        }

        /// Bit 7 set in each byte of `word` below 0x20, a quote or a backslash (RFC 8259 §7): a
        /// byte-wise subtraction borrows into bit 7 of a byte that was zero (after XOR with the
        /// character) or below 0x20; `& ~word` drops bytes with bit 7 set (UTF-8 multibyte
        /// sequences, which never need an escape).
        @inline(__always)
        private static func escapeBits(_ word: UInt64) -> UInt64 {
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
            let control = (word &- ones &* 0x20) & ~word
            let isQuote = (quote &- ones) & ~quote
            let isBackslash = (backslash &- ones) & ~backslash
            return (control | isQuote | isBackslash) & highs
        }
    }

    let fragments: [Fragment]
    /// The body with the given values where the fragments go, in the fragments' order.
    let template: ([JSONValue]) -> JSONValue

    /// The body as a JSON value (the fragments' values in place).
    var value: JSONValue { template(fragments.map(\.value)) }

    /// `value.bytes`, with the fragments copied in.
    var bytes: [UInt8] {
        guard !fragments.isEmpty else { return template([]).bytes }
        // Markers no body value contains: a control character makes the writer escape it, so
        // its serialized form is found only where the marker was placed (checked: exactly once).
        let markers = fragments.indices.map { JSONValue.string("\u{1}spliced \($0)\u{1}") }
        let rest = template(markers).bytes
        var positions: [Int] = []
        for marker in markers {
            let found = Self.occurrences(of: marker.bytes, in: rest)
            guard found.count == 1 else { return value.bytes }
            positions.append(found[0])
        }
        let order = positions.indices.sorted { positions[$0] < positions[$1] }
        var out: [UInt8] = []
        out.reserveCapacity(rest.count + fragments.reduce(0) { $0 + $1.text.count })
        var from = 0
        for i in order {
            out += rest[from..<positions[i]]
            out += fragments[i].text
            from = positions[i] + markers[i].bytes.count
        }
        out += rest[from...]
        return out
    }

    private static func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> [Int] {
        guard needle.count <= haystack.count, let first = needle.first else { return [] }
        var found: [Int] = []
        var i = 0
        while i + needle.count <= haystack.count {
            if haystack[i] == first, haystack[i..<(i + needle.count)].elementsEqual(needle) { found.append(i) }
            i += 1
        }
        return found
    }
}
