/// Percent-decoding and `name=value&...` parsing shared by query strings and
/// application/x-www-form-urlencoded bodies (WHATWG URL "urlencoded parser" rules).
public enum URLEncoding {
    /// Decodes `%XX` escapes (and `+` as space when `plusAsSpace`). A malformed escape is kept
    /// literally rather than rejected, as browsers do; invalid UTF-8 becomes U+FFFD.
    public static func decode(_ bytes: UnsafeBufferPointer<UInt8>, plusAsSpace: Bool) -> String {
        var needsWork = false
        for byte in bytes where byte == UInt8(ascii: "%") || (plusAsSpace && byte == UInt8(ascii: "+")) {
            needsWork = true
            break
        }
        if !needsWork { return String(decoding: bytes, as: UTF8.self) }

        var out = [UInt8]()
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "%"), i + 2 < bytes.count,
               let high = hexValue(bytes[i + 1]), let low = hexValue(bytes[i + 2]) {
                out.append(high << 4 | low)
                i += 3
            } else {
                out.append(plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func decode(_ string: String, plusAsSpace: Bool) -> String {
        var string = string
        return string.withUTF8 { decode($0, plusAsSpace: plusAsSpace) }
    }

    /// Splits on `&`, then on the first `=`; empty pieces are skipped, a piece without `=` has
    /// an empty value. Order and repeated names are kept because some protocols care (e.g.
    /// repeated `trust_mark_type` or `entity_type` parameters).
    public static func pairs(_ bytes: UnsafeBufferPointer<UInt8>) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        var start = 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != UInt8(ascii: "&") { end += 1 }
            if end > start {
                var equals = start
                while equals < end && bytes[equals] != UInt8(ascii: "=") { equals += 1 }
                let name = decode(UnsafeBufferPointer(rebasing: bytes[start..<equals]), plusAsSpace: true)
                let value = equals < end
                    ? decode(UnsafeBufferPointer(rebasing: bytes[(equals + 1)..<end]), plusAsSpace: true)
                    : ""
                result.append((name: name, value: value))
            }
            start = end + 1
        }
        return result
    }

    public static func pairs(_ string: String) -> [(name: String, value: String)] {
        var string = string
        return string.withUTF8 { pairs($0) }
    }

    @inline(__always)
    private static func hexValue(_ byte: UInt8) -> UInt8? { Hex.value(byte) }
}
