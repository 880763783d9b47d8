import Foundation
import Issuance
import TestSupport
import XCTest

/// The QR drawings, read back by an independent decoder (zxing-cpp, with Pillow for the PNG).
final class QRCodeTests: XCTestCase {
    /// Reads a base64 PNG on stdin, prints the decoded text of the one QR code in it.
    private static let decodePNG = """
        import base64, io, sys
        try:
            import zxingcpp
            from PIL import Image
        except ImportError:
            sys.exit(3)
        image = Image.open(io.BytesIO(base64.b64decode(sys.stdin.read())))
        image.load()
        results = zxingcpp.read_barcodes(image)
        assert len(results) == 1, results
        assert results[0].format == zxingcpp.BarcodeFormat.QRCode, results[0].format
        print(image.size[0], image.size[1], image.mode)
        sys.stdout.write(results[0].text)
        """

    func testPNGDecodesToTheOfferLink() throws {
        let provider = try OfferTestProvider.make()
        let offer = try provider.createOffer(OfferRequest(personaID: "erika", txCode: true))
        let link = provider.offerURL(offer)
        let code = try QRCode(encoding: link)
        let png = code.png(scale: 8)
        let output = try PythonRunner.run(Self.decodePNG, input: Data(png).base64EncodedString())
        let lines = output.split(separator: "\n", maxSplits: 1)
        let side = (code.size + 2 * QRCode.quietZone) * 8
        XCTAssertEqual(String(lines[0]), "\(side) \(side) 1")
        XCTAssertEqual(String(lines[1]), link)
    }

    func testLongByValueLinkStillDecodes() throws {
        let provider = try OfferTestProvider.make()
        let offer = try provider.createOffer(OfferRequest(personaID: "zoe"))
        let link = provider.offerURL(offer, byValue: true)
        let output = try PythonRunner.run(Self.decodePNG, input: Data(QRCode(encoding: link).png(scale: 4)).base64EncodedString())
        XCTAssertEqual(output.split(separator: "\n", maxSplits: 1).last.map(String.init), link)
    }

    func testSVGHasOnePathOfTheDarkModules() throws {
        let code = try QRCode(encoding: "openid-credential-offer://?credential_offer_uri=https%3A%2F%2Fa.example%2Fo")
        let svg = code.svg()
        XCTAssertEqual(svg.components(separatedBy: "<path").count, 2)
        let side = code.size + 8
        XCTAssertTrue(svg.contains("viewBox=\"0 0 \(side) \(side)\""))
        // Every dark module lies in exactly one run: the runs' widths add up to the dark count.
        let d = try XCTUnwrap(svg.components(separatedBy: " d=\"").last?.components(separatedBy: "\"").first)
        let widths = d.components(separatedBy: "h").dropFirst().compactMap { part -> Int? in
            part.hasPrefix("-") ? nil : Int(part.prefix { $0.isNumber })
        }
        XCTAssertEqual(widths.reduce(0, +), code.modules.filter { $0 }.count)
        // Finder pattern: the top-left 7x7 corner is dark on its border.
        XCTAssertTrue(code.isDark(x: 0, y: 0) && code.isDark(x: 6, y: 6) && !code.isDark(x: 1, y: 1))
    }
}
