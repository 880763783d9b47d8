/// Byte-level ASCII helpers for header names and media types. HTTP field names are ASCII and
/// case-insensitive; going through Unicode-aware `lowercased()` would cost an allocation and a
/// table walk per header on the hot path.
enum ASCII {
    @inline(__always)
    static func lower(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
    }

    /// Over contiguous bytes (native and literal strings, small ones too), not a `zip` of the
    /// two UTF-8 views, whose iterator is most of the cost on every response of the fetch path.
    static func equalsIgnoringCase(_ a: String, _ b: String) -> Bool {
        let x = a.utf8, y = b.utf8
        guard x.count == y.count else { return false }
        if let same = x.withContiguousStorageIfAvailable({ p in y.withContiguousStorageIfAvailable { q in equalsIgnoringCase(p, q) } }),
           let same {
            return same
        }
        for (p, q) in zip(x, y) where lower(p) != lower(q) { return false }
        return true
    }

    static func equalsIgnoringCase(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count where lower(a[i]) != lower(b[i]) { return false }
        return true
    }

    /// Whether `bytes` ends with `suffix` (lower-case ASCII), ignoring case.
    static func hasSuffixIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ suffix: StaticString) -> Bool {
        let n = suffix.utf8CodeUnitCount
        guard bytes.count >= n else { return false }
        return equalsIgnoringCase(UnsafeBufferPointer(rebasing: bytes[(bytes.count - n)...]),
                                  UnsafeBufferPointer(start: suffix.utf8Start, count: n))
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
        return contentType.withUTF8 { lowercased(mediaType($0)) }
    }

    /// The media type's bytes within a Content-Type value, as they are (not lower-cased).
    static func mediaType(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var end = 0
        while end < bytes.count && bytes[end] != UInt8(ascii: ";") { end += 1 }
        var start = 0
        while start < end && isWhitespace(bytes[start]) { start += 1 }
        while end > start && isWhitespace(bytes[end - 1]) { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
}
