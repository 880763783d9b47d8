import CQRDecode

/// Reads the QR code in a PNG image (the inverse of `QRCode.png`): libpng decodes the image,
/// whatever its colour type, bit depth or interlacing, to 8-bit luminance, and zxing-cpp reads
/// the symbol. Used where a verifier accepts a photographed or exported QR code as-is.
public enum QRCodeReader {
    /// Widest and tallest image read: a version 40 code at 20 pixels per module is 3,700 pixels.
    public static let maximumSide = 4096
    /// At most 4 Mpx (2048 × 2048): a QR code needs no more, and the bound is checked from the
    /// PNG header before a pixel buffer is allocated, so a tiny PNG declaring a huge canvas (a
    /// decompression bomb) costs nothing.
    public static let maximumPixels = 1 << 22
    /// A version 40 code holds at most 7,089 numeric characters (ISO/IEC 18004 Table 7); 16 KiB
    /// covers every mode's UTF-8 text.
    static let textCapacity = 16 * 1024

    public enum ReadingError: Error, Equatable, CustomStringConvertible {
        case notPNG
        case invalidPNG(String)
        case tooLarge(String)
        case noQRCode
        case textTooLong
        case internalFailure

        public var description: String {
            switch self {
            case .notPNG: "not a PNG image (no PNG signature, PNG spec §5.2)"
            case .invalidPNG(let why): "not a valid PNG image: \(why)"
            case .tooLarge(let size):
                "the image is \(size); at most \(maximumSide) pixels a side and \(maximumPixels) pixels in all are read"
            case .noQRCode: "no QR code found in the image"
            case .textTooLong: "the QR code's text is longer than \(textCapacity) bytes"
            case .internalFailure: "the QR decoder failed"
            }
        }
    }

    /// The text of the one QR code in `png` (the first found, if there are several).
    public static func text(inPNG png: [UInt8]) throws(ReadingError) -> String {
        var out = [CChar](repeating: 0, count: textCapacity)
        var message = [CChar](repeating: 0, count: 256)
        var written = 0
        let status = png.withUnsafeBufferPointer { input in
            trustbed_qr_decode_png(input.baseAddress ?? UnsafePointer(bitPattern: 1), input.count,
                                   UInt32(maximumSide), UInt64(maximumPixels),
                                   &out, out.count, &written, &message, message.count)
        }
        switch Int(status) {
        case Int(TRUSTBED_QR_OK.rawValue):
            return String(decoding: out.prefix(written).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        case Int(TRUSTBED_QR_NOT_PNG.rawValue): throw .notPNG
        case Int(TRUSTBED_QR_INVALID_PNG.rawValue): throw .invalidPNG(string(message))
        case Int(TRUSTBED_QR_TOO_LARGE.rawValue): throw .tooLarge(string(message))
        case Int(TRUSTBED_QR_NOT_FOUND.rawValue): throw .noQRCode
        case Int(TRUSTBED_QR_TEXT_TOO_LONG.rawValue): throw .textTooLong
        default: throw .internalFailure
        }
    }

    private static func string(_ buffer: [CChar]) -> String {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
