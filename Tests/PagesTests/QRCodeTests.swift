import Foundation
@testable import Pages
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
        let link = "openid-credential-offer://?credential_offer_uri="
            + "http%3A%2F%2F127.0.0.1%3A8080%2Fpid-provider%2Foffers%2F0199c82cc000q2b3xK9-fR_0aZ1y7vT3eQ%2Fcredential-offer"
        let code = try QRCode(encoding: link)
        let png = code.png(scale: 8)
        let output = try PythonRunner.run(Self.decodePNG, input: Data(png).base64EncodedString())
        let lines = output.split(separator: "\n", maxSplits: 1)
        let side = (code.size + 2 * QRCode.quietZone) * 8
        XCTAssertEqual(String(lines[0]), "\(side) \(side) 1")
        XCTAssertEqual(String(lines[1]), link)
    }

    func testLongByValueLinkStillDecodes() throws {
        // A credential offer by value (OpenID4VCI §4.1.1) with a pre-authorized code, as long as
        // the PID Provider's: about 500 characters once percent-encoded.
        let offer = #"{"credential_issuer":"http://127.0.0.1:8080/pid-provider","credential_configuration_ids":["#
            + #""eu.europa.ec.eudi.pid_vc_sd_jwt","eu.europa.ec.eudi.pid_mso_mdoc"],"grants":{"urn:ietf:params:oauth:"#
            + #"grant-type:pre-authorized_code":{"pre-authorized_code":"0199c82cc000Yc3Vt9q_8mJ2kP0aR5xW1eN7bT4hL6gD2sF0uQ9zE3"}}}"#
        let link = "openid-credential-offer://?credential_offer=" + offer.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let output = try PythonRunner.run(Self.decodePNG, input: Data(QRCode(encoding: link).png(scale: 4)).base64EncodedString())
        XCTAssertEqual(output.split(separator: "\n", maxSplits: 1).last.map(String.init), link)
    }

    /// Level L and alphanumeric mode (PixelPass's base45 text): 4,000 characters fit in one code
    /// at L (version 40 holds 4,296) but not at M (at most 3,391), and zxing-cpp reads them back.
    func testBase45TextAtLevelLFitsWhereMDoesNot() throws {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:")
        let text = String((0..<4_000).map { alphabet[($0 * 7 + $0 / 45) % 45] })
        XCTAssertThrowsError(try QRCode(encoding: text))
        let code = try QRCode(encoding: text, level: .low)
        XCTAssertEqual(code.size, 173, "version 39: 4,087 alphanumeric characters at L")
        let output = try PythonRunner.run(Self.decodePNG, input: Data(code.png(scale: 3)).base64EncodedString())
        XCTAssertEqual(output.split(separator: "\n", maxSplits: 1).last.map(String.init), text)
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
