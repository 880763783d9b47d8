/// The tags an mdoc uses: tdate (0, RFC 8949 §3.4.1), full-date (1004, RFC 8943) and encoded
/// CBOR data item (24, RFC 8949 §3.4.5.1).
extension CBORValue {
    public static let tagDateTime: UInt64 = 0
    public static let tagEncodedCBOR: UInt64 = 24
    public static let tagFullDate: UInt64 = 1004

    /// Tag 0 text in the form ISO/IEC 18013-5 §9.1.2.4 requires of tdate: UTC, "Z", no
    /// fractional seconds (e.g. `2024-10-01T13:30:02Z`). Input is Unix seconds, as the clock gives,
    /// within years 0000–9999 (RFC 3339 has four-digit years).
    public static func dateTime(_ unixSeconds: Int64) -> CBORValue {
        .tagged(tagDateTime, .text(CBORDate.rfc3339(unixSeconds)))
    }

    /// Unix seconds of a tag-0 date/time; any RFC 3339 offset is applied, fractions are dropped.
    public var dateTimeValue: Int64? {
        guard case .tagged(Self.tagDateTime, .text(let s)) = self else { return nil }
        return CBORDate.unixSeconds(rfc3339: s)
    }

    /// Tag 1004 `full-date` (RFC 8943), e.g. a birth date.
    public static func fullDate(_ date: CBORFullDate) -> CBORValue {
        .tagged(tagFullDate, .text(date.description))
    }

    public var fullDateValue: CBORFullDate? {
        guard case .tagged(Self.tagFullDate, .text(let s)) = self else { return nil }
        return CBORFullDate(s)
    }

    /// `#6.24(bstr .cbor value)`: the value's deterministic encoding wrapped in a byte string,
    /// so the exact bytes can be hashed or signed (IssuerSignedItemBytes, MobileSecurityObjectBytes).
    public static func embedded(_ value: CBORValue) -> CBORValue {
        .tagged(tagEncodedCBOR, .bytes(value.encoded()))
    }

    /// The bytes inside a tag-24 byte string, exactly as received; nil for anything else.
    public var embeddedBytes: [UInt8]? {
        guard case .tagged(Self.tagEncodedCBOR, .bytes(let b)) = self else { return nil }
        return b
    }

    /// The data item inside a tag-24 byte string, decoded strictly; nil when this is not one.
    public func embeddedValue() throws(CBORDecodingError) -> CBORValue? {
        guard let bytes = embeddedBytes else { return nil }
        return try CBORValue.decode(bytes)
    }
}

/// A calendar date without time or zone (RFC 3339 `full-date`, YYYY-MM-DD).
public struct CBORFullDate: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// nil for a day that does not exist (2023-02-29) or a year outside 0...9999.
    public init?(year: Int, month: Int, day: Int) {
        guard (0...9999).contains(year), (1...12).contains(month),
              (1...CBORDate.daysIn(month: month, year: year)).contains(day) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses exactly `YYYY-MM-DD`.
    public init?(_ text: String) {
        let b = Array(text.utf8)
        guard b.count == 10, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
              let y = CBORDate.digits(b, 0, 4), let m = CBORDate.digits(b, 5, 2), let d = CBORDate.digits(b, 8, 2)
        else { return nil }
        self.init(year: y, month: m, day: d)
    }

    public var description: String {
        CBORDate.pad(year, 4) + "-" + CBORDate.pad(month, 2) + "-" + CBORDate.pad(day, 2)
    }

    public static func < (a: CBORFullDate, b: CBORFullDate) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }
}

/// Civil-calendar arithmetic for RFC 3339 timestamps, without Foundation (days-from-civil of
/// the proleptic Gregorian calendar, as in H. Hinnant's chrono algorithms).
enum CBORDate {
    static func rfc3339(_ t: Int64) -> String {
        let days = t >= 0 ? t / 86_400 : (t - 86_399) / 86_400
        let secs = Int(t - days * 86_400)
        let (y, m, d) = civil(fromDays: days)
        guard (0...9999).contains(y) else {
            return pad(Int(y), 4) + "-" + pad(m, 2) + "-" + pad(d, 2) + "T"
                + pad(secs / 3600, 2) + ":" + pad(secs / 60 % 60, 2) + ":" + pad(secs % 60, 2) + "Z"
        }
        // Four-digit years, the only ones an mdoc validity has, written digit by digit rather
        // than as padded Strings joined as above: every MSO carries three dates.
        var text: [UInt8] = Array("0000-00-00T00:00:00Z".utf8)
        func put(_ value: Int, at end: Int, width: Int) {
            var v = value
            for i in stride(from: end, to: end - width, by: -1) {
                text[i] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
            }
        }
        put(Int(y), at: 3, width: 4)
        put(m, at: 6, width: 2)
        put(d, at: 9, width: 2)
        put(secs / 3600, at: 12, width: 2)
        put(secs / 60 % 60, at: 15, width: 2)
        put(secs % 60, at: 18, width: 2)
        return String(decoding: text, as: UTF8.self)
    }

    /// `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`; "T"/"Z" are case-insensitive per RFC 3339 §5.6.
    static func unixSeconds(rfc3339 text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count >= 20, let date = CBORFullDate(String(decoding: b[0..<10], as: UTF8.self)),
              b[10] | 0x20 == UInt8(ascii: "t"), b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
              let hh = digits(b, 11, 2), let mm = digits(b, 14, 2), let ss = digits(b, 17, 2),
              hh < 24, mm < 60, ss < 61
        else { return nil }
        var i = 19
        if b[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < b.count, (0x30...0x39).contains(b[i]) { i += 1 }
            guard i > start else { return nil }
        }
        guard i < b.count else { return nil }
        var offset = 0
        if b[i] | 0x20 == UInt8(ascii: "z") {
            i += 1
        } else {
            guard b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-"), b.count == i + 6, b[i + 3] == UInt8(ascii: ":"),
                  let oh = digits(b, i + 1, 2), let om = digits(b, i + 4, 2), oh < 24, om < 60
            else { return nil }
            offset = (oh * 60 + om) * 60 * (b[i] == UInt8(ascii: "-") ? -1 : 1)
            i += 6
        }
        guard i == b.count else { return nil }
        let days = days(fromCivil: Int64(date.year), date.month, date.day)
        return days * 86_400 + Int64(hh * 3600 + mm * 60 + min(ss, 59)) - Int64(offset)
    }

    static func days(fromCivil year: Int64, _ month: Int, _ day: Int) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = Int64((month + 9) % 12)
        let doy = (153 * mp + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z: Int64) -> (Int64, Int, Int) {
        let z = z + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = Int(doy - (153 * mp + 2) / 5 + 1)
        let m = Int(mp < 10 ? mp + 3 : mp - 9)
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func digits(_ b: [UInt8], _ at: Int, _ count: Int) -> Int? {
        guard at + count <= b.count else { return nil }
        var v = 0
        for c in b[at..<at + count] {
            guard (0x30...0x39).contains(c) else { return nil }
            v = v * 10 + Int(c - 0x30)
        }
        return v
    }

    static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
