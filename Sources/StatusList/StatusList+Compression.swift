import CZlib
import JSON
import Support

extension StatusList {
    /// `lst` (Token Status List §4.2): the byte array compressed with DEFLATE in the ZLIB format
    /// (RFC 1950), at the highest compression level as §4.1 recommends, then base64url.
    public func encodedList() throws(StatusListError) -> String {
        Base64URL.encode(try Self.deflate(bytes))
    }

    /// The `status_list` claim of a Status List Token: `{"bits": n, "lst": "..."}` (§4.2).
    public func jsonValue(aggregationURI: String? = nil) throws(StatusListError) -> JSONValue {
        var object: [String: JSONValue] = ["bits": JSONValue(bits), "lst": .string(try encodedList())]
        if let aggregationURI { object["aggregation_uri"] = .string(aggregationURI) }
        return .object(object)
    }

    /// 16 MiB inflated: room for 128 million 1-bit statuses, and a bound on what a hostile
    /// status list can make a wallet allocate.
    public static let defaultMaximumBytes = 16 * 1024 * 1024

    /// Decodes `lst`, refusing anything that inflates beyond `maximumBytes`.
    public init(bits: Int, encodedList: String, maximumBytes: Int = StatusList.defaultMaximumBytes) throws(StatusListError) {
        guard let compressed = Base64URL.decode(encodedList) else { throw .malformedList("lst is not base64url") }
        try self.init(bits: bits, bytes: try Self.inflate(compressed, maximumBytes: maximumBytes))
    }

    public static func deflate(_ input: [UInt8]) throws(StatusListError) -> [UInt8] {
        var length = compressBound(uLong(input.count))
        var output = [UInt8](repeating: 0, count: Int(length))
        let result = output.withUnsafeMutableBufferPointer { out in
            input.withUnsafeBufferPointer { inp in
                compress2(out.baseAddress, &length, inp.baseAddress, uLong(inp.count), Z_BEST_COMPRESSION)
            }
        }
        guard result == Z_OK else { throw .compression("compress2 returned \(result)") }
        return Array(output.prefix(Int(length)))
    }

    /// Not a zlib code: marks the caller's limit being hit inside the inflate loop.
    private static let overLimit: Int32 = -1000

    /// Streams through inflate in chunks so a bomb is stopped at `maximumBytes` rather than after
    /// allocating its full size. The stream must end exactly at the input's end.
    public static func inflate(_ input: [UInt8], maximumBytes: Int) throws(StatusListError) -> [UInt8] {
        guard !input.isEmpty else { throw .malformedList("empty lst") }
        var stream = z_stream()
        guard trustbed_inflate_init(&stream) == Z_OK else { throw .compression("inflateInit failed") }
        defer { inflateEnd(&stream) }

        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var input = input
        let status: Int32 = input.withUnsafeMutableBufferPointer { inp in
            stream.next_in = inp.baseAddress
            stream.avail_in = uInt(inp.count)
            while true {
                let result = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                if output.count + produced > maximumBytes { return Self.overLimit }
                output.append(contentsOf: chunk[..<produced])
                switch result {
                case Z_STREAM_END: return stream.avail_in == 0 ? Z_STREAM_END : Z_DATA_ERROR
                case Z_OK: continue
                case Z_BUF_ERROR where produced > 0: continue
                default: return result
                }
            }
        }
        switch status {
        case Z_STREAM_END: return output
        case Self.overLimit: throw .tooLarge(limit: maximumBytes)
        case Z_BUF_ERROR: throw .malformedList("truncated zlib stream")
        default: throw .malformedList("not a zlib stream (inflate returned \(status))")
        }
    }
}
