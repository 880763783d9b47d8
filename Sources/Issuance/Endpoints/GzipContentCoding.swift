import CZlib
import HTTP

/// The `gzip` content coding (RFC 9110 §8.4.1.3, RFC 1952) for responses worth compressing,
/// such as a Token Status List (Token Status List §8.1 leaves compression over HTTP to the
/// usual content negotiation). zlib writes the gzip wrapper itself (windowBits 16 + 15).
enum GzipContentCoding {
    /// True when `Accept-Encoding` (RFC 9110 §12.5.3) accepts gzip: `gzip`, `x-gzip` or `*`
    /// listed without `q=0`. An explicit refusal of gzip wins over `*`.
    static func accepts(_ header: String?) -> Bool {
        guard let header else { return false }
        var wildcard = false
        for item in header.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let coding = parts.first else { continue }
            let refused = parts.dropFirst().contains { parameter in
                guard parameter.hasPrefix("q=") else { return false }
                return Double(parameter.dropFirst(2)) == 0
            }
            if coding == "gzip" || coding == "x-gzip" { return !refused }
            if coding == "*" { wildcard = !refused }
        }
        return wildcard
    }

    /// `body` compressed as a gzip member, or nil if zlib fails (the caller then sends it as is).
    static func compress(_ body: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        // deflateInit2 is a macro over deflateInit2_ with the library's version and struct size.
        guard deflateInit2_(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY,
                            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(body.count))))
        var input = body
        let result = input.withUnsafeMutableBufferPointer { inp in
            output.withUnsafeMutableBufferPointer { out -> Int32 in
                stream.next_in = inp.baseAddress
                stream.avail_in = uInt(inp.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard result == Z_STREAM_END else { return nil }
        return Array(output.prefix(Int(stream.total_out)))
    }
}

extension HTTPResponse {
    /// This response gzip-encoded when `acceptEncoding` allows it, with `Vary: Accept-Encoding`
    /// either way so a cache keeps the two representations apart (RFC 9110 §12.5.5).
    func negotiatingGzip(acceptEncoding: String?) -> HTTPResponse {
        var response = self
        response.headers.append((name: "Vary", value: "Accept-Encoding"))
        if GzipContentCoding.accepts(acceptEncoding), let compressed = GzipContentCoding.compress(body) {
            response.headers.append((name: "Content-Encoding", value: "gzip"))
            response.body = compressed
        }
        return response
    }
}
