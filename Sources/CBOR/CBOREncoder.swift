extension CBORValue {
    /// Core deterministic encoding (RFC 8949 §4.2.1): shortest heads, definite lengths only,
    /// floats in the shortest width that keeps their value, and map entries sorted by the
    /// bytewise order of their encoded keys. Two equal values always encode to the same bytes,
    /// which is what a signature or a digest (an mdoc's valueDigests) needs.
    ///
    /// A map built with the same key twice keeps the last pair, as a dictionary literal would:
    /// a map with duplicate keys is not valid CBOR (§5.6), so it is never written.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        encode(into: &out)
        return out
    }

    public func encode(into out: inout [UInt8]) {
        switch self {
        case .unsigned(let u): Self.writeHead(0, u, into: &out)
        case .negative(let n): Self.writeHead(1, n, into: &out)
        case .bytes(let b):
            Self.writeHead(2, UInt64(b.count), into: &out)
            out += b
        case .text(let s):
            Self.writeHead(3, UInt64(s.utf8.count), into: &out)
            out += s.utf8
        case .array(let a):
            Self.writeHead(4, UInt64(a.count), into: &out)
            for v in a { v.encode(into: &out) }
        case .map(let entries):
            if let order = Self.scalarKeyOrder(entries) {
                Self.writeHead(5, UInt64(order.count), into: &out)
                for index in order {
                    entries[index].key.encode(into: &out)
                    entries[index].value.encode(into: &out)
                }
                return
            }
            let order = Self.canonicalOrder(entries)
            Self.writeHead(5, UInt64(order.count), into: &out)
            // Values are written in place: encoding each into its own array first copied every
            // nested map once per level (an mdoc's MSO nests four deep).
            for (key, index) in order {
                out += key
                entries[index].value.encode(into: &out)
            }
        case .tagged(let tag, let v):
            Self.writeHead(6, tag, into: &out)
            v.encode(into: &out)
        case .simple(let v):
            if v < 24 { out.append(0xe0 | v) } else { out.append(0xf8); out.append(v) }
        case .bool(let b): out.append(b ? 0xf5 : 0xf4)
        case .null: out.append(0xf6)
        case .undefined: out.append(0xf7)
        case .float(let d): CBORFloat.writeShortest(d, into: &out)
        }
    }

    /// The shortest head for `argument` (§4.2.1: preferred serialization of integers/lengths).
    /// Byte by byte, with no array literal or stride: an mdoc writes a head for every salt,
    /// digest and element (measured: see docs/performance.md).
    public static func writeHead(_ major: UInt8, _ argument: UInt64, into out: inout [UInt8]) {
        let m = major << 5
        switch argument {
        case 0..<24:
            out.append(m | UInt8(argument))
        case 24...0xff:
            out.append(m | 24)
            out.append(UInt8(argument))
        case 0x100...0xffff:
            out.append(m | 25)
            appendBigEndian(argument, bytes: 2, into: &out)
        case 0x1_0000...0xffff_ffff:
            out.append(m | 26)
            appendBigEndian(argument, bytes: 4, into: &out)
        default:
            out.append(m | 27)
            appendBigEndian(argument, bytes: 8, into: &out)
        }
    }

    static func appendBigEndian(_ v: UInt64, bytes: Int, into out: inout [UInt8]) {
        var shift = (bytes - 1) * 8
        while shift >= 0 {
            out.append(UInt8(truncatingIfNeeded: v >> UInt64(shift)))
            shift -= 8
        }
    }

    /// For a map whose keys are all integers or text strings (every map of an mdoc, a COSE
    /// structure or a status list): the entry indices in the bytewise order of the encoded keys,
    /// found without encoding them, since with shortest heads that order is major type, then the
    /// integer's argument, or a text's byte length and then its bytes (RFC 8949 §4.2.1). Of
    /// equal keys only the last entry stays. nil for other keys. This spares encoding every key
    /// into an array of its own to sort by, for every map of every mdoc.
    private static func scalarKeyOrder(_ entries: [CBORMapEntry]) -> [Int]? {
        for entry in entries {
            switch entry.key {
            case .unsigned, .negative, .text: continue
            default: return nil
            }
        }
        var order = Array(entries.indices)
        order.sort { a, b in
            let c = compareScalarKeys(entries[a].key, entries[b].key)
            return c == 0 ? a < b : c < 0
        }
        var kept: [Int] = []
        kept.reserveCapacity(order.count)
        for index in order {
            if let last = kept.last, compareScalarKeys(entries[last].key, entries[index].key) == 0 {
                kept[kept.count - 1] = index
            } else {
                kept.append(index)
            }
        }
        return kept
    }

    /// -1, 0 or 1 as the encodings of two integer or text keys compare bytewise.
    private static func compareScalarKeys(_ x: CBORValue, _ y: CBORValue) -> Int {
        func rank(_ v: CBORValue) -> Int {
            switch v {
            case .unsigned: return 0
            case .negative: return 1
            default: return 3
            }
        }
        switch (x, y) {
        case (.unsigned(let a), .unsigned(let b)), (.negative(let a), .negative(let b)):
            return a == b ? 0 : (a < b ? -1 : 1)
        case (.text(let a), .text(let b)):
            let (p, q) = (a.utf8, b.utf8)
            if p.count != q.count { return p.count < q.count ? -1 : 1 }
            for (u, v) in zip(p, q) where u != v { return u < v ? -1 : 1 }
            return 0
        default:
            let (a, b) = (rank(x), rank(y))
            return a == b ? 0 : (a < b ? -1 : 1)
        }
    }

    /// The encoded keys with the index of the entry whose value goes with them, sorted by key
    /// bytes; of equal encoded keys only the last entry stays.
    private static func canonicalOrder(_ entries: [CBORMapEntry]) -> [(key: [UInt8], index: Int)] {
        var keyed = entries.indices.map { (key: entries[$0].key.encoded(), index: $0) }
        keyed.sort { $0.key == $1.key ? $0.index < $1.index : $0.key.lexicographicallyPrecedes($1.key) }
        var order: [(key: [UInt8], index: Int)] = []
        order.reserveCapacity(keyed.count)
        for entry in keyed {
            if let last = order.last, last.key == entry.key { order[order.count - 1] = entry } else { order.append(entry) }
        }
        return order
    }
}

/// IEEE 754 width conversions for CBOR floats (RFC 8949 §3.3, Appendix D). Done on bit
/// patterns because Float16 is not available on every platform Swift targets.
enum CBORFloat {
    static func double(fromHalf half: UInt16) -> Double {
        let sign: FloatingPointSign = half & 0x8000 != 0 ? .minus : .plus
        let exponent = Int(half >> 10) & 0x1f
        let mantissa = Double(half & 0x3ff)
        switch exponent {
        case 0: return Double(sign: sign, exponent: -24, significand: mantissa)
        case 31: return mantissa == 0 ? (sign == .minus ? -.infinity : .infinity) : .nan
        default: return Double(sign: sign, exponent: exponent - 25, significand: mantissa + 1024)
        }
    }

    /// The half-precision bits for `d` when the conversion is exact, else nil.
    static func halfBits(exactly d: Double) -> UInt16? {
        let f = Float(d)
        guard Double(f) == d else { return nil }
        let bits = f.bitPattern
        let sign = UInt16(bits >> 16) & 0x8000
        let exponent = Int((bits >> 23) & 0xff)
        let mantissa = bits & 0x7f_ffff
        if exponent == 0xff { return sign | 0x7c00 } // infinity (NaN is handled by the caller)
        if exponent == 0 { return mantissa == 0 ? sign : nil } // zero; float subnormals are too small
        let e = exponent - 127
        if e > 15 { return nil }
        if e >= -14 {
            guard mantissa & 0x1fff == 0 else { return nil }
            return sign | UInt16(e + 15) << 10 | UInt16(mantissa >> 13)
        }
        // Half subnormal: value = m × 2^-24 with m < 1024.
        guard e >= -24 else { return nil }
        let full = mantissa | 0x80_0000
        let shift = UInt32(-(e + 1))
        guard full & ((1 << shift) - 1) == 0 else { return nil }
        return sign | UInt16(full >> shift)
    }

    /// Shortest of half, single and double that round-trips (§4.2.1); NaN as 0xf97e00 (§4.2.2).
    static func writeShortest(_ d: Double, into out: inout [UInt8]) {
        if d.isNaN { out += [0xf9, 0x7e, 0x00]; return }
        if let half = halfBits(exactly: d) {
            out.append(0xf9)
            CBORValue.appendBigEndian(UInt64(half), bytes: 2, into: &out)
        } else if Double(Float(d)) == d {
            out.append(0xfa)
            CBORValue.appendBigEndian(UInt64(Float(d).bitPattern), bytes: 4, into: &out)
        } else {
            out.append(0xfb)
            CBORValue.appendBigEndian(d.bitPattern, bytes: 8, into: &out)
        }
    }
}
