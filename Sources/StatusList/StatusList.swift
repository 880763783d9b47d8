import JOSE

/// A status value (Token Status List §7.1). Values 0x03 and 0x0B–0x0F are application specific;
/// the rest are reserved for the IANA registry.
public struct StatusType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let valid = StatusType(rawValue: 0x00)
    public static let invalid = StatusType(rawValue: 0x01)
    public static let suspended = StatusType(rawValue: 0x02)

    public var description: String {
        switch rawValue {
        case 0x00: return "VALID"
        case 0x01: return "INVALID"
        case 0x02: return "SUSPENDED"
        default:
            let hex = String(rawValue, radix: 16, uppercase: true)
            return "0x" + (hex.count < 2 ? "0" : "") + hex
        }
    }
}

public enum StatusListError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `bits` is not 1, 2, 4 or 8 (Token Status List §4.1).
    case invalidBits(Int)
    case indexOutOfRange(index: Int, size: Int)
    /// The status does not fit in `bits` bits.
    case valueTooLarge(UInt8, bits: Int)
    /// `lst` is not base64url of a complete zlib stream, or has data after it.
    case malformedList(String)
    /// The inflated list would exceed the caller's limit (a decompression bomb).
    case tooLarge(limit: Int)
    /// Every index of the list is in use.
    case listFull
    /// A Status List Token or `status` claim with missing or wrong members.
    case malformedToken(String)
    case compression(String)
    case signing(JOSEError)

    public var description: String {
        switch self {
        case .invalidBits(let bits): return "bits must be 1, 2, 4 or 8, not \(bits)"
        case .indexOutOfRange(let index, let size): return "index \(index) outside a list of \(size) statuses"
        case .valueTooLarge(let value, let bits): return "status \(value) does not fit in \(bits) bits"
        case .malformedList(let why): return "malformed status list: \(why)"
        case .tooLarge(let limit): return "status list larger than \(limit) bytes"
        case .listFull: return "no free index left in the status list"
        case .malformedToken(let why): return "malformed status list token: \(why)"
        case .compression(let why): return "zlib: \(why)"
        case .signing(let error): return "signing failed: \(error)"
        }
    }
}

/// A packed array of statuses of `bits` bits each (Token Status List §4.1): status `i` sits in
/// byte `i * bits / 8`, starting at bit `(i * bits) % 8` counted from the least significant bit,
/// so index 0 is the lowest bits of byte 0.
public struct StatusList: Equatable, Sendable {
    public let bits: Int
    public private(set) var bytes: [UInt8]

    public static let allowedBits: Set<Int> = [1, 2, 4, 8]

    /// An all-VALID list with room for at least `size` statuses (rounded up to whole bytes).
    public init(bits: Int, size: Int) throws(StatusListError) {
        guard Self.allowedBits.contains(bits) else { throw .invalidBits(bits) }
        guard size >= 0 else { throw .indexOutOfRange(index: size, size: 0) }
        self.bits = bits
        self.bytes = [UInt8](repeating: 0, count: (size * bits + 7) / 8)
    }

    public init(bits: Int, bytes: [UInt8]) throws(StatusListError) {
        guard Self.allowedBits.contains(bits) else { throw .invalidBits(bits) }
        self.bits = bits
        self.bytes = bytes
    }

    /// How many statuses the byte array holds.
    public var count: Int { bytes.count * 8 / bits }

    public func status(at index: Int) throws(StatusListError) -> StatusType {
        let (byte, shift) = try position(index)
        let mask = UInt8(truncatingIfNeeded: (1 << bits) - 1)
        return StatusType(rawValue: (bytes[byte] >> shift) & mask)
    }

    public mutating func setStatus(_ status: StatusType, at index: Int) throws(StatusListError) {
        let (byte, shift) = try position(index)
        let mask = UInt8(truncatingIfNeeded: (1 << bits) - 1)
        guard status.rawValue <= mask else { throw .valueTooLarge(status.rawValue, bits: bits) }
        bytes[byte] = (bytes[byte] & ~(mask << shift)) | (status.rawValue << shift)
    }

    private func position(_ index: Int) throws(StatusListError) -> (byte: Int, shift: UInt8) {
        guard index >= 0, index < count else { throw .indexOutOfRange(index: index, size: count) }
        let bit = index * bits
        return (bit / 8, UInt8(bit % 8))
    }
}
