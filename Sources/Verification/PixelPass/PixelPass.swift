import CBOR
import JSON
import StatusList
import Support

/// MOSIP PixelPass, the QR encoding Inji Wallet shares credentials offline with (the `pixelpass`
/// library, `generateQRData` / `decode`): the data, CBOR-encoded first when it parses as JSON,
/// compressed with zlib at level 9 (a zlib stream, RFC 1950, header and Adler-32 included: the
/// library calls pako's `deflate`, not `deflateRaw`), then base45 (RFC 9285). A text that is not
/// JSON (a compact SD-JWT, a base64url mdoc) is compressed as its UTF-8 bytes.
public enum PixelPass {
    /// What a PixelPass text carried: JSON (it was CBOR inside) or plain text.
    public enum Payload: Equatable, Sendable {
        case json(JSONValue)
        case text(String)
    }

    /// Refusals of a PixelPass text, each with the reason a scanner's user can act on.
    public enum DecodingError: Error, Equatable, CustomStringConvertible {
        case notBase45(String)
        case notZlib(String)
        case tooLarge(limit: Int)
        case invalidCBOR(String)
        case notText

        public var description: String {
            switch self {
            case .notBase45(let why): "not base45: \(why)"
            case .notZlib(let why): "not a zlib stream: \(why)"
            case .tooLarge(let limit): "inflates past \(limit) bytes (refused as a decompression bomb)"
            case .invalidCBOR(let why): "invalid CBOR: \(why)"
            case .notText: "the inflated data is neither CBOR nor UTF-8 text"
            }
        }
    }

    /// 1 MiB: a credential with a portrait is a few tens of kilobytes; a QR code holds under 3 KiB
    /// compressed, so anything larger is a bomb.
    public static let maximumInflatedBytes = 1 << 20

    /// PixelPass's `generateQRData(data)` without a header.
    public static func encode(_ text: String) -> String {
        let bytes: [UInt8]
        if let json = try? JSONValue.parse(Array(text.utf8)) {
            bytes = cbor(json).encoded()
        } else {
            bytes = Array(text.utf8)
        }
        // compress2 fails only for lack of memory or a bad level; neither applies here.
        return Base45.encode((try? StatusList.deflate(bytes)) ?? [])
    }

    /// PixelPass's `decode`: base45, inflate (bounded), then CBOR when the bytes are exactly one
    /// CBOR data item, else UTF-8 text. The text of a compact SD-JWT or a base64url mdoc starts
    /// with a letter that CBOR reads as a short text string followed by trailing bytes, so it is
    /// never mistaken for CBOR. Bytes that look like a CBOR container (a map or an array head)
    /// but do not decode are refused as invalid CBOR rather than read as text.
    public static func decode(_ text: String, maximumBytes: Int = maximumInflatedBytes) throws(DecodingError) -> Payload {
        let compressed: [UInt8]
        do { compressed = try Base45.decode(text) } catch { throw .notBase45(error.description) }
        let inflated: [UInt8]
        do {
            inflated = try StatusList.inflate(compressed, maximumBytes: maximumBytes)
        } catch {
            if case .tooLarge(let limit) = error { throw .tooLarge(limit: limit) }
            if case .malformedList(let why) = error { throw .notZlib(why) }
            throw .notZlib("\(error)")
        }
        do {
            return .json(try json(CBORValue.decode(inflated)))
        } catch {
            // Major types 4 (array) and 5 (map): what JSON becomes; printable text never starts so.
            if let first = inflated.first, first >> 5 == 4 || first >> 5 == 5 {
                throw .invalidCBOR("\(error)")
            }
        }
        guard let string = String(validating: inflated, as: UTF8.self) else { throw .notText }
        return .text(string)
    }

    /// JSON → CBOR as PixelPass's encoder (cbor-web's `encode` of the parsed value) does:
    /// objects as maps with text keys, integers as major type 0/1, other numbers as floats.
    public static func cbor(_ value: JSONValue) -> CBORValue {
        switch value {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .int(let n): return n >= 0 ? .unsigned(UInt64(n)) : .negative(UInt64(-(n + 1)))
        case .double(let d): return .float(d)
        case .string(let s): return .text(s)
        case .array(let items): return .array(items.map(cbor))
        case .object(let members): return .map(members.map { CBORMapEntry(.text($0.key), cbor($0.value)) })
        }
    }

    /// CBOR → JSON as PixelPass's decoder (`JSON.stringify` of the decoded value) gives it; byte
    /// strings, which JSON lacks, become base64url. Keys that are not text are refused.
    static func json(_ value: CBORValue) throws(DecodingError) -> JSONValue {
        switch value {
        case .unsigned(let n):
            return n <= UInt64(Int64.max) ? .int(Int64(n)) : .double(Double(n))
        case .negative(let n):
            return n < UInt64(Int64.max) ? .int(-1 - Int64(n)) : .double(-1 - Double(n))
        case .bytes(let bytes): return .string(Base64URL.encode(bytes))
        case .text(let text): return .string(text)
        case .array(let items):
            var out: [JSONValue] = []
            for item in items { out.append(try json(item)) }
            return .array(out)
        case .map(let entries):
            var out: [String: JSONValue] = [:]
            for entry in entries {
                guard let key = entry.key.textValue else { throw .invalidCBOR("a map key is not a text string") }
                out[key] = try json(entry.value)
            }
            return .object(out)
        case .tagged(_, let inner): return try json(inner)
        case .bool(let flag): return .bool(flag)
        case .float(let d): return d.isFinite ? .double(d) : .null
        case .null, .undefined, .simple: return .null
        }
    }
}
