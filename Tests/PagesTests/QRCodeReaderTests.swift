import CZlib
import Foundation
@testable import Pages
import XCTest

/// The QR reader (libpng + zxing-cpp behind `CQRDecode`): our own PNGs read back, every PNG
/// colour type it must convert, and the inputs it must refuse without a crash or a big allocation.
final class QRCodeReaderTests: XCTestCase {
    /// A PixelPass-like base45 text (alphanumeric mode, level L, as `wallet qr --pixelpass` draws it).
    static let base45Text = "NCFOXN%TS3DH3ZSUZK+.RV-UDM8N:IS.8J:1IZ-D6S0L5FM0M0IGJFDNA 4*RGCNVUM3:F/-GFPM3ZF6Y6"

    func testOurPNGReadsBackToItsText() throws {
        let link = "openid-credential-offer://?credential_offer_uri=http%3A%2F%2F127.0.0.1%3A8080%2Fpid-provider%2Foffers%2Fx"
        XCTAssertEqual(try QRCodeReader.text(inPNG: QRCode(encoding: link).png(scale: 8)), link)
        XCTAssertEqual(try QRCodeReader.text(inPNG: QRCode(encoding: Self.base45Text, level: .low).png(scale: 3)), Self.base45Text)
    }

    /// A version 39 symbol of 4,000 base45 characters, the largest PixelPass we draw, at 2 px a module.
    func testLargestPixelPassSymbolReadsBack() throws {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:")
        let text = String((0..<4_000).map { alphabet[($0 * 7 + $0 / 45) % 45] })
        XCTAssertEqual(try QRCodeReader.text(inPNG: QRCode(encoding: text, level: .low).png(scale: 2)), text)
    }

    /// Each PNG colour type and bit depth the reader converts to luminance (PNG spec §11.2.2),
    /// interlaced too, and a transparent background that must read as white paper.
    func testEveryColourTypeReadsBack() throws {
        let code = try QRCode(encoding: Self.base45Text, level: .low)
        let variants: [(String, TestPNG.Kind)] = [
            ("grey 8", .grey8), ("grey 16", .grey16), ("RGB 8", .rgb8), ("RGB 16", .rgb16),
            ("RGBA on transparent", .rgbaTransparent), ("grey+alpha", .greyAlpha8), ("palette", .palette),
            ("grey 8 interlaced", .grey8Interlaced), ("palette with tRNS", .paletteTransparent),
        ]
        for (name, kind) in variants {
            let png = TestPNG.qr(code, scale: 4, kind: kind)
            XCTAssertEqual(try QRCodeReader.text(inPNG: png), Self.base45Text, name)
        }
    }

    /// An iCCP chunk whose profile inflates to 64 MiB (a decompression bomb in an ancillary
    /// chunk) is skipped unread: the QR code still reads, promptly.
    func testAncillaryBombIsSkipped() throws {
        let png = try QRCode(encoding: Self.base45Text).png(scale: 4)
        var bomb: [UInt8] = []
        TestPNG.chunk("iCCP", Array("icc".utf8) + [0, 0] + TestPNG.deflate([UInt8](repeating: 0, count: 64 << 20)), &bomb)
        let start = Date()
        XCTAssertEqual(try QRCodeReader.text(inPNG: Array(png.prefix(33)) + bomb + png.dropFirst(33)), Self.base45Text)
        XCTAssertLessThan(Date().timeIntervalSince(start), 2)
    }

    func testPNGWithoutQRCodeIsRefused() {
        let blank = TestPNG.make(width: 64, height: 64, kind: .grey8) { _, _ in 0xFF }
        XCTAssertThrowsError(try QRCodeReader.text(inPNG: blank)) { XCTAssertEqual($0 as? QRCodeReader.ReadingError, .noQRCode) }
        let noise = TestPNG.make(width: 120, height: 120, kind: .grey8) { x, y in (x * 31 + y * 17) % 7 < 3 ? 0 : 0xFF }
        XCTAssertThrowsError(try QRCodeReader.text(inPNG: noise)) { XCTAssertEqual($0 as? QRCodeReader.ReadingError, .noQRCode) }
    }

    func testTruncatedPNGIsRefused() throws {
        let png = try QRCode(encoding: Self.base45Text).png()
        for cut in [9, 20, 33, png.count / 2, png.count - 12, png.count - 1] {
            XCTAssertThrowsError(try QRCodeReader.text(inPNG: Array(png.prefix(cut))), "cut at \(cut)") { error in
                guard case .invalidPNG = error as? QRCodeReader.ReadingError else { return XCTFail("\(cut): \(error)") }
            }
        }
    }

    func testCorruptCRCIsRefused() throws {
        var png = try QRCode(encoding: Self.base45Text).png()
        png[32] ^= 0xFF  // IHDR's CRC (bytes 29-32); a flip in IDAT's data fails inflate before its CRC is read
        XCTAssertThrowsError(try QRCodeReader.text(inPNG: png)) { error in
            guard case .invalidPNG(let why) = error as? QRCodeReader.ReadingError else { return XCTFail("\(error)") }
            XCTAssertTrue(why.lowercased().contains("crc"), why)
        }
    }

    func testNotAPNGIsRefused() {
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00]
        for bytes in [jpeg, [], Array("garbage, not an image".utf8), [0x89, 0x50, 0x4E, 0x47]] {
            XCTAssertThrowsError(try QRCodeReader.text(inPNG: bytes)) { XCTAssertEqual($0 as? QRCodeReader.ReadingError, .notPNG) }
        }
    }

    /// A 66-byte PNG whose IHDR declares 100,000 × 100,000 pixels (40 GB as RGBA) is refused
    /// from its header, at once; so is one just past the pixel bound though under the side bound.
    func testHugeDimensionsAreRefusedFromTheHeader() {
        let start = Date()
        for (width, height) in [(100_000, 100_000), (4097, 1), (4096, 4096), (2049, 2048)] {
            let png = TestPNG.header(width: UInt32(width), height: UInt32(height))
            XCTAssertThrowsError(try QRCodeReader.text(inPNG: png)) { error in
                XCTAssertEqual(error as? QRCodeReader.ReadingError, .tooLarge("\(width) x \(height) pixels"))
            }
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 1)
        // The bound itself is allowed (and then the missing image data is what is refused).
        XCTAssertThrowsError(try QRCodeReader.text(inPNG: TestPNG.header(width: 2048, height: 2048))) { error in
            guard case .invalidPNG = error as? QRCodeReader.ReadingError else { return XCTFail("\(error)") }
        }
    }
}

/// A minimal PNG writer for the reader's tests: the colour types `QRCode.png` never writes.
enum TestPNG {
    enum Kind { case grey8, grey16, rgb8, rgb16, rgbaTransparent, greyAlpha8, palette, paletteTransparent, grey8Interlaced }

    static func qr(_ code: QRCode, scale: Int, kind: Kind) -> [UInt8] {
        let side = (code.size + 2 * QRCode.quietZone) * scale
        return make(width: side, height: side, kind: kind) { x, y in
            code.isDark(x: x / scale - QRCode.quietZone, y: y / scale - QRCode.quietZone) ? 0 : 0xFF
        }
    }

    /// `grey(x, y)`: 0 black … 255 white. Transparent kinds draw white as transparent black.
    static func make(width: Int, height: Int, kind: Kind, grey: (Int, Int) -> Int) -> [UInt8] {
        let (depth, colour): (UInt8, UInt8) = switch kind {
        case .grey8, .grey8Interlaced: (8, 0)
        case .grey16: (16, 0)
        case .rgb8: (8, 2)
        case .rgb16: (16, 2)
        case .rgbaTransparent: (8, 6)
        case .greyAlpha8: (8, 4)
        case .palette, .paletteTransparent: (8, 3)
        }
        func pixel(_ x: Int, _ y: Int) -> [UInt8] {
            let g = UInt8(grey(x, y))
            switch kind {
            case .grey8, .grey8Interlaced: return [g]
            case .grey16: return [g, g]
            case .rgb8: return g == 0 ? [0, 0, 0x40] : [0xFF, 0xFF, 0xF0]  // dark blue on cream
            case .rgb16: return [g, g, g, g, g, g]
            case .rgbaTransparent: return g == 0 ? [0, 0, 0, 0xFF] : [0, 0, 0, 0]
            case .greyAlpha8: return g == 0 ? [0, 0xFF] : [0, 0]
            case .palette, .paletteTransparent: return [g == 0 ? 1 : 0]
            }
        }
        var raw: [UInt8] = []
        if kind == .grey8Interlaced {
            // Adam7 (PNG spec §8.2): seven passes, each a reduced image with its own filter bytes.
            let passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
            for (x0, y0, dx, dy) in passes where x0 < width && y0 < height {
                for y in stride(from: y0, to: height, by: dy) {
                    raw.append(0)
                    for x in stride(from: x0, to: width, by: dx) { raw += pixel(x, y) }
                }
            }
        } else {
            for y in 0..<height {
                raw.append(0)
                for x in 0..<width { raw += pixel(x, y) }
            }
        }
        var out = signature
        chunk("IHDR", be(UInt32(width)) + be(UInt32(height)) + [depth, colour, 0, 0, kind == .grey8Interlaced ? 1 : 0], &out)
        if kind == .palette { chunk("PLTE", [0xFF, 0xFF, 0xFF, 0x10, 0x10, 0x10], &out) }
        if kind == .paletteTransparent {
            // Entry 0 black but fully transparent (tRNS), entry 1 opaque black: only alpha tells them apart.
            chunk("PLTE", [0, 0, 0, 0, 0, 0], &out)
            chunk("tRNS", [0x00], &out)
        }
        chunk("IDAT", deflate(raw), &out)
        chunk("IEND", [], &out)
        return out
    }

    /// Signature, an IHDR (8-bit grey) and IEND, no image data.
    static func header(width: UInt32, height: UInt32) -> [UInt8] {
        var out = signature
        chunk("IHDR", be(width) + be(height) + [8, 0, 0, 0, 0], &out)
        chunk("IDAT", deflate([0]), &out)
        chunk("IEND", [], &out)
        return out
    }

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func chunk(_ type: String, _ data: [UInt8], _ out: inout [UInt8]) {
        out += be(UInt32(data.count))
        let body = Array(type.utf8) + data
        out += body
        out += be(UInt32(truncatingIfNeeded: body.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }))
    }

    static func deflate(_ input: [UInt8]) -> [UInt8] {
        var length = compressBound(uLong(input.count))
        var output = [UInt8](repeating: 0, count: Int(length))
        _ = output.withUnsafeMutableBufferPointer { o in
            input.withUnsafeBufferPointer { compress2(o.baseAddress, &length, $0.baseAddress, uLong($0.count), 9) }
        }
        return Array(output.prefix(Int(length)))
    }

    static func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
}
