/// base64url without padding (RFC 7515 §2, RFC 4648 §5).
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Every pair of characters, indexed by the 12 bits they encode (8 KiB), first character in
    /// the low byte: each 3 input bytes become 4 characters with two lookups and one store.
    private static let pairs: [UInt16] = (0 ..< 4096).map { UInt16(alphabet[$0 >> 6]) | UInt16(alphabet[$0 & 63]) << 8 }

    /// Written straight into the String's storage, not appended per character: the PID Provider
    /// encodes every disclosure, JWT part and digest, and a cold resolve some 10 KB. Whole groups
    /// go through `pairs`, half the lookups of one per character (measured: see
    /// docs/performance.md).
    public static func encode(_ bytes: [UInt8]) -> String {
        let length = encodedLength(bytes.count)
        guard length > 0 else { return "" }
        return bytes.withUnsafeBufferPointer { input in
            String(unsafeUninitializedCapacity: length) { out in
                write(input, to: out)
                return length
            }
        }
    }

    /// The encoding appended to `out` as bytes, for a caller assembling a larger ASCII text (a
    /// compact JWS): no String is made, checked as UTF-8 and copied again for it.
    public static func encode(_ bytes: [UInt8], appendingTo out: inout [UInt8]) {
        bytes.withUnsafeBufferPointer { encode($0, appendingTo: &out) }
    }

    /// `encode(_:appendingTo:)` for bytes the caller holds in a buffer (a slice of a larger
    /// text, random bytes in a pool), so no array is made for them.
    ///
    /// Encoded on the stack, `chunkInput` bytes at a time, and appended with one copy: growing
    /// `out` by `repeatElement(0, count:)` first and writing over it is an element-wise loop,
    /// run for each of an SD-JWT's ~50 disclosures, salts and digests.
    public static func encode(_ input: UnsafeBufferPointer<UInt8>, appendingTo out: inout [UInt8]) {
        guard !input.isEmpty else { return }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: encodedLength(chunkInput)) { scratch in
            var from = 0
            while from < input.count {
                // Whole 3-byte groups per chunk, so only the last chunk ends in a partial group.
                let take = min(chunkInput, input.count - from)
                let length = encodedLength(take)
                write(UnsafeBufferPointer(rebasing: input[from..<from + take]), to: UnsafeMutableBufferPointer(rebasing: scratch[0..<length]))
                out.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[0..<length]))
                from += take
            }
        }
    }

    /// Input bytes encoded per stack chunk (a multiple of 3; 1 KiB of output).
    private static let chunkInput = 768

    private static func encodedLength(_ count: Int) -> Int {
        count / 3 * 4 + (count % 3 == 0 ? 0 : count % 3 + 1)
    }

    /// Writes the encoding of `input` into `out`, which holds exactly `encodedLength` bytes.
    private static func write(_ input: UnsafeBufferPointer<UInt8>, to out: UnsafeMutableBufferPointer<UInt8>) {
        let full = input.count / 3, rest = input.count % 3
        var i = 0, o = 0
        pairs.withUnsafeBufferPointer { pairs in
            let raw = UnsafeMutableRawPointer(out.baseAddress!)
            let source = UnsafeRawPointer(input.baseAddress!)
            // Two groups at a time while eight bytes can be read: one load of six
            // bytes (the top 48 bits of a big-endian word), four lookups, one 8-byte
            // store, where one group at a time takes twice the loads and stores (measured:
            // see docs/performance.md).
            while i + 8 <= input.count {
                let v = source.loadUnaligned(fromByteOffset: i, as: UInt64.self).bigEndian >> 16
                let low = UInt64(pairs[Int(v >> 36)]) | UInt64(pairs[Int(v >> 24 & 0xFFF)]) << 16
                let high = UInt64(pairs[Int(v >> 12 & 0xFFF)]) | UInt64(pairs[Int(v & 0xFFF)]) << 16
                raw.storeBytes(of: (low | high << 32).littleEndian, toByteOffset: o, as: UInt64.self)
                i += 6
                o += 8
            }
            while i < full * 3 {
                let v = Int(input[i]) << 16 | Int(input[i + 1]) << 8 | Int(input[i + 2])
                let word = UInt32(pairs[v >> 12]) | UInt32(pairs[v & 0xFFF]) << 16
                raw.storeBytes(of: word.littleEndian, toByteOffset: o, as: UInt32.self)
                i += 3
                o += 4
            }
        }
        if rest > 0 {
            alphabet.withUnsafeBufferPointer { table in
                let v = UInt32(input[i]) << 16 | (rest == 2 ? UInt32(input[i + 1]) << 8 : 0)
                out[o] = table[Int(v >> 18 & 63)]
                out[o + 1] = table[Int(v >> 12 & 63)]
                if rest == 2 { out[o + 2] = table[Int(v >> 6 & 63)] }
            }
        }
    }

    /// Strict: nil on padding, whitespace, characters outside the base64url alphabet, an
    /// impossible length, or non-zero trailing bits. Rejecting non-canonical forms keeps one
    /// byte string to one encoding, so a token cannot be re-spelled and still verify.
    public static func decode(_ s: String) -> [UInt8]? {
        var s = s
        return s.withUTF8 { decode($0) }
    }

    /// `decode(_:)` of ASCII bytes in a buffer (a part of a compact JWS, without a String made
    /// for it). Four characters at a time through `values`, invalid ones collected in one
    /// flag tested at the end, not a character at a time with an append per byte: every
    /// request decodes proof, access token and DPoP parts.
    public static func decode(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let rest = input.count % 4
        guard rest != 1 else { return nil }
        let full = input.count / 4
        let count = full * 3 + (rest == 0 ? 0 : rest - 1)
        guard count > 0 else { return [] }
        var valid = true
        let out = [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            values.withUnsafeBufferPointer { table in
                var invalid: UInt32 = 0
                var trailing: UInt32 = 0
                var o = 0
                for q in 0..<full {
                    let i = q * 4
                    let a = UInt32(table[Int(input[i])]), b = UInt32(table[Int(input[i + 1])])
                    let c = UInt32(table[Int(input[i + 2])]), d = UInt32(table[Int(input[i + 3])])
                    invalid |= a | b | c | d
                    let v = a << 18 | b << 12 | c << 6 | d
                    out[o] = UInt8(truncatingIfNeeded: v >> 16)
                    out[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                    out[o + 2] = UInt8(truncatingIfNeeded: v)
                    o += 3
                }
                let i = full * 4
                if rest == 2 {
                    let a = UInt32(table[Int(input[i])]), b = UInt32(table[Int(input[i + 1])])
                    invalid |= a | b
                    trailing = b & 0x0F   // the 4 bits after the byte
                    out[o] = UInt8(truncatingIfNeeded: a << 2 | b >> 4)
                } else if rest == 3 {
                    let a = UInt32(table[Int(input[i])]), b = UInt32(table[Int(input[i + 1])])
                    let c = UInt32(table[Int(input[i + 2])])
                    invalid |= a | b | c
                    trailing = c & 0x03   // the 2 bits after the bytes
                    let v = a << 12 | b << 6 | c
                    out[o] = UInt8(truncatingIfNeeded: v >> 10)
                    out[o + 1] = UInt8(truncatingIfNeeded: v >> 2)
                }
                // Every valid value is below 64, `invalidValue` is not; unused bits must be zero.
                valid = invalid & ~0x3F == 0 && trailing == 0
            }
            initialized = count
        }
        return valid ? out : nil
    }

    private static let invalidValue: UInt8 = 0x80

    /// The 6-bit value of each base64url character, `invalidValue` for every other byte.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: invalidValue, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()
}
