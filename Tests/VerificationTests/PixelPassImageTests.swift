import Cryptography
import JSON
import Pages
@testable import Verification
import XCTest

/// `Verifier.verifyPixelPass(png:)`: the QR code read from the image and verified as its text
/// is; what cannot be read is `invalid_request` naming the image as the problem.
final class PixelPassImageTests: XCTestCase {
    func testQRImageOfAnSDJWTIsVerifiedAsItsText() throws {
        let fixture = try VerifierFixture.make()
        let credential = try fixture.issuer.issue(holder: PrivateKey(generatingFor: .ES256), now: fixture.clock.now())
        let text = PixelPass.encode(credential.serialized)
        let png = try QRCode(encoding: text, level: .low).png(scale: 3)
        let fromImage = try fixture.verifier.verifyPixelPass(png: png)
        let fromText = try fixture.verifier.verifyPixelPass(text)
        XCTAssertTrue(fromImage.report.verified, "\(fromImage.report.checks)")
        // The same checks and claims (a detail may say "fetched" once and "cached" after).
        XCTAssertEqual(fromImage.report.checks.map { "\($0.name) \($0.ok)" }, fromText.report.checks.map { "\($0.name) \($0.ok)" })
        XCTAssertEqual(fromImage.json["claims"], fromText.json["claims"])
        XCTAssertEqual(fromImage.json["claims"]?["urn:eudi:pid:1"]?["given_name"], "Erika")
    }

    func testUnreadableImagesAreInvalidRequest() throws {
        let fixture = try VerifierFixture.make()
        let cases: [([UInt8], String)] = [
            (Array("not an image".utf8), "pixelpass image: not a PNG image"),
            (Array(try QRCode(encoding: "x").png().prefix(50)), "pixelpass image: not a valid PNG image"),
            ([UInt8](repeating: 0x89, count: Verifier.maximumPixelPassImageBytes + 1), "pixelpass image: larger than"),
            (try QRCode(encoding: "lower case is not base45").png(), "pixelpass: not base45"),
        ]
        for (png, reason) in cases {
            XCTAssertThrowsError(try fixture.verifier.verifyPixelPass(png: png)) { error in
                let error = error as? VerificationError
                XCTAssertEqual(error?.codeValue, .invalidRequest)
                XCTAssertTrue(error?.description.hasPrefix(reason) == true, "\(error?.description ?? "") ≠ \(reason)…")
            }
        }
    }
}
