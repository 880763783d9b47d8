/// Byte-level ASCII helpers for header names and media types. HTTP field names are ASCII and
/// case-insensitive; going through Unicode-aware `lowercased()` would cost an allocation and a
/// table walk per header on the hot path.
enum ASCII {
    @inline(__always)
    static func lower(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
    }

    static func equalsIgnoringCase(_ a: String, _ b: String) -> Bool {
        let x = a.utf8, y = b.utf8
        guard x.count == y.count else { return false }
        for (p, q) in zip(x, y) where lower(p) != lower(q) { return false }
        return true
    }

    static func hasUppercase(_ string: String) -> Bool {
        // Native and literal strings are contiguous: a plain loop over bytes, no iterator.
        string.utf8.withContiguousStorageIfAvailable(hasUppercase)
            ?? string.utf8.contains { $0 >= 0x41 && $0 <= 0x5A }
    }

    static func hasUppercase(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in bytes where byte >= 0x41 && byte <= 0x5A { return true }
        return false
    }

    static func lowercased(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        if !hasUppercase(bytes) { return String(decoding: bytes, as: UTF8.self) }
        return String(unsafeUninitializedCapacity: bytes.count) { out in
            for i in 0..<bytes.count { out[i] = lower(bytes[i]) }
            return bytes.count
        }
    }

    static func lowercased(_ string: String) -> String {
        var string = string
        return string.withUTF8 { lowercased($0) }
    }

    /// The media type of a Content-Type value: the part before any `;` parameters, trimmed and
    /// lower-cased ("Application/JSON; charset=utf-8" → "application/json").
    static func mediaType(_ contentType: String) -> String {
        var contentType = contentType
        return contentType.withUTF8 { bytes in
            var end = 0
            while end < bytes.count && bytes[end] != UInt8(ascii: ";") { end += 1 }
            var start = 0
            while start < end && isWhitespace(bytes[start]) { start += 1 }
            while end > start && isWhitespace(bytes[end - 1]) { end -= 1 }
            return lowercased(UnsafeBufferPointer(rebasing: bytes[start..<end]))
        }
    }

    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
}
