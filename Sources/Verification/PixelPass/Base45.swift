/// Base45 (RFC 9285): two bytes become three characters of a 45-character alphabet (the QR code
/// alphanumeric set, so a base45 text fills a QR code in alphanumeric mode), a last odd byte two.
public enum Base45 {
    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:".utf8)
    /// Character → value, 0xFF for characters outside the alphabet.
    static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        return table
    }()

    /// RFC 9285 §4: `[a b]` → `n = a·256 + b = c + d·45 + e·45²` → `c d e`; a lone byte `a = c + d·45` → `c d`.
    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count / 2 * 3 + 2)
        var i = 0
        while i + 1 < bytes.count {
            let n = Int(bytes[i]) << 8 | Int(bytes[i + 1])
            out += [alphabet[n % 45], alphabet[n / 45 % 45], alphabet[n / 2025]]
            i += 2
        }
        if i < bytes.count {
            let n = Int(bytes[i])
            out += [alphabet[n % 45], alphabet[n / 45]]
        }
        return String(decoding: out, as: UTF8.self)
    }

    public enum DecodingError: Error, Equatable, CustomStringConvertible {
        case invalidCharacter(offset: Int)
        /// A length of 1 modulo 3 (RFC 9285 §4.2: a string that cannot come from encoding).
        case invalidLength(Int)
        /// A triple above 65535 or a pair above 255 (§4.2: MUST be refused).
        case outOfRange(offset: Int)

        public var description: String {
            switch self {
            case .invalidCharacter(let offset): "character \(offset) is not in the base45 alphabet (RFC 9285 §4)"
            case .invalidLength(let n): "\(n) characters: a base45 length is never 1 modulo 3 (RFC 9285 §4.2)"
            case .outOfRange(let offset): "the group at character \(offset) decodes past its byte range (RFC 9285 §4.2)"
            }
        }
    }

    public static func decode(_ text: String) throws(DecodingError) -> [UInt8] {
        let chars = Array(text.utf8)
        guard chars.count % 3 != 1 else { throw .invalidLength(chars.count) }
        var digits = [Int](repeating: 0, count: chars.count)
        for (i, c) in chars.enumerated() {
            let v = values[Int(c)]
            guard v != 0xFF else { throw .invalidCharacter(offset: i) }
            digits[i] = Int(v)
        }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 3 * 2 + 1)
        var i = 0
        while i + 2 < digits.count {
            let n = digits[i] + digits[i + 1] * 45 + digits[i + 2] * 2025
            guard n <= 0xFFFF else { throw .outOfRange(offset: i) }
            out += [UInt8(n >> 8), UInt8(n & 0xFF)]
            i += 3
        }
        if i < digits.count {
            let n = digits[i] + digits[i + 1] * 45
            guard n <= 0xFF else { throw .outOfRange(offset: i) }
            out.append(UInt8(n))
        }
        return out
    }
}
