import Foundation

/// Unguessable values whose text sorts by creation time: 12 lower-case hex digits of the wall
/// clock's milliseconds (big-endian), then random bytes in base64url. Offer ids, pre-authorized
/// codes, issuer states, access tokens, notification and credential ids are made this way.
///
/// Why: each of these keys an index, and a random key lands on a random b-tree leaf. Once the
/// file outgrows SQLite's 2 MiB page cache every insert first reads its leaf back and later
/// writes it as a new WAL frame, and the checkpoint copies as many distinct pages; keys made in
/// the same millisecond region all go to the last leaves instead (UUIDv7's idea). Hex, not
/// base64url, because base64url's alphabet does not sort in ASCII order. The prefix tells a
/// holder when the value was made, which its protocol message (offer, token response,
/// credential) says anyway; it is never read back as a time, so the wall clock, not the
/// injectable one, is fine, and a clock step only costs locality.
///
/// The random bytes come from the caller (`SecureRandom` in `Cryptography`, which sits above
/// this module): at least 16 of them, 128 bits of secrecy.
public enum OrderedIdentifier {
    /// Characters of the time prefix (48 bits of milliseconds: until year 10889).
    public static let prefixLength = 12

    /// The time prefix of `milliseconds`, then `random` in base64url.
    public static func make(random: [UInt8], milliseconds: UInt64 = wallClockMilliseconds()) -> String {
        precondition(random.count >= 16, "an identifier needs at least 128 random bits")
        return timePrefix(milliseconds) + Base64URL.encode(random)
    }

    /// The 12 lower-case hex digits of the low 48 bits of `milliseconds`, written digit by digit
    /// (a small string and a loop, where `Hex.encode` of six bytes built an array and a string).
    public static func timePrefix(_ milliseconds: UInt64) -> String {
        var digits = [UInt8](repeating: 0, count: prefixLength)
        for i in 0..<prefixLength {
            let nibble = UInt8(truncatingIfNeeded: milliseconds >> (44 - 4 * UInt64(i))) & 0x0F
            digits[i] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
        }
        return String(decoding: digits, as: UTF8.self)
    }

    public static func wallClockMilliseconds() -> UInt64 { UInt64(max(0, Date().timeIntervalSince1970 * 1000)) }

    /// Whether `text` starts like an ordered identifier and is `length` characters long.
    public static func hasPrefix(_ text: some StringProtocol, length: Int) -> Bool {
        let utf8 = text.utf8
        guard utf8.count == length else { return false }
        return utf8.prefix(prefixLength).allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
