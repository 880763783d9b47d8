import CQREncode
import CZlib

/// A QR code for a deep link (a credential offer, a presentation request), encoded by
/// libqrencode (byte mode, error correction level M: readable from a laptop screen with some
/// glare, and still a small symbol for a `credential_offer_uri` link), and drawn as PNG or SVG. Both drawings keep the 4-module
/// quiet zone ISO/IEC 18004 §9.1 asks for; scanners miss codes that touch other content.
public struct QRCode: Sendable, Equatable {
    /// Modules per side.
    public let size: Int
    /// Row-major, `true` = dark.
    public let modules: [Bool]
    public static let quietZone = 4

    /// Refused when `text` is longer than a version 40 symbol holds at level M (2,331 bytes).
    public struct TooLong: Error, CustomStringConvertible {
        public let bytes: Int
        public var description: String { "\(bytes) bytes do not fit in a QR code" }
    }

    /// Error correction levels (ISO/IEC 18004 §7.5.1): L restores about 7 % of the symbol, M 15 %.
    public enum Level: Sendable { case low, medium }

    /// `level`: M for links on screens; L where capacity matters more (PixelPass, which MOSIP's
    /// library also draws at L). libqrencode picks the densest mode per segment, so a base45 text
    /// is encoded alphanumerically.
    public init(encoding text: String, level: Level = .medium) throws(TooLong) {
        guard let code = QRcode_encodeString(text, 0, level == .low ? QR_ECLEVEL_L : QR_ECLEVEL_M, QR_MODE_8, 1) else {
            throw TooLong(bytes: text.utf8.count)
        }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        // Bit 0 of each libqrencode module byte is the colour (1 = dark); the others describe
        // what the module is part of.
        let bytes = UnsafeBufferPointer(start: code.pointee.data, count: width * width)
        size = width
        modules = bytes.map { $0 & 1 == 1 }
    }

    public func isDark(x: Int, y: Int) -> Bool {
        x >= 0 && y >= 0 && x < size && y < size && modules[y * size + x]
    }

    /// A 1-bit greyscale PNG (PNG spec §11.2.2): `scale` pixels per module, quiet zone
    /// included. Chunks are IHDR, one IDAT (zlib stream from `compress2`), IEND, each with the
    /// CRC-32 zlib computes.
    public func png(scale: Int = 8) -> [UInt8] {
        let side = (size + 2 * Self.quietZone) * scale
        let rowBytes = (side + 7) / 8
        var raw = [UInt8]()
        raw.reserveCapacity((rowBytes + 1) * side)
        for py in 0..<side {
            raw.append(0)  // filter type None
            var row = [UInt8](repeating: 0, count: rowBytes)
            for px in 0..<side where !isDark(x: px / scale - Self.quietZone, y: py / scale - Self.quietZone) {
                row[px >> 3] |= 0x80 >> UInt8(px & 7)  // 1 = white in greyscale
            }
            raw += row
        }
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header = Self.bigEndian(UInt32(side)) + Self.bigEndian(UInt32(side))
        header += [1, 0, 0, 0, 0]  // bit depth 1, greyscale, deflate, adaptive filtering, no interlace
        Self.appendChunk("IHDR", header, to: &out)
        Self.appendChunk("IDAT", Self.deflate(raw), to: &out)
        Self.appendChunk("IEND", [], to: &out)
        return out
    }

    /// An SVG with one `<path>` of the dark modules (a unit square per module, runs merged
    /// per row), in module units scaled by the viewBox, so it stays sharp at any size.
    public func svg() -> String {
        let side = size + 2 * Self.quietZone
        var path = ""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard isDark(x: x, y: y) else { x += 1; continue }
                var run = 1
                while isDark(x: x + run, y: y) { run += 1 }
                path += "M\(x + Self.quietZone) \(y + Self.quietZone)h\(run)v1h-\(run)z"
                x += run
            }
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" width="\(side * 8)" height="\(side * 8)" \
            shape-rendering="crispEdges"><rect width="\(side)" height="\(side)" fill="#fff"/>\
            <path fill="#000" d="\(path)"/></svg>

            """
    }

    private static func appendChunk(_ type: String, _ data: [UInt8], to out: inout [UInt8]) {
        let typeBytes = Array(type.utf8)
        out += bigEndian(UInt32(data.count))
        let body = typeBytes + data
        out += body
        let crc = body.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
        out += bigEndian(UInt32(truncatingIfNeeded: crc))
    }

    private static func deflate(_ input: [UInt8]) -> [UInt8] {
        var length = compressBound(uLong(input.count))
        var output = [UInt8](repeating: 0, count: Int(length))
        let result = output.withUnsafeMutableBufferPointer { out in
            input.withUnsafeBufferPointer { inp in
                compress2(out.baseAddress, &length, inp.baseAddress, uLong(inp.count), Z_BEST_COMPRESSION)
            }
        }
        // compressBound guarantees room, and the input is in memory: compress2 cannot fail.
        precondition(result == Z_OK, "compress2 returned \(result)")
        return Array(output.prefix(Int(length)))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
