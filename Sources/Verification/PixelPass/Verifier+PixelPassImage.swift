import Pages

extension Verifier {
    /// Largest QR image read: the server's default body limit. A PNG of the largest PixelPass QR
    /// code (version 40, 185 modules with the quiet zone) is a few kilobytes at any sensible scale.
    public static let maximumPixelPassImageBytes = 1 << 20

    /// A PixelPass QR code as a PNG image (`POST <rp>/verify/pixelpass` with `image/png`): the
    /// code is read (libpng + zxing-cpp, `QRCodeReader`) and its text verified as
    /// `verifyPixelPass(_:)` does. What is not a PNG, is too large, or holds no readable QR code
    /// is `invalid_request` with the reason.
    public func verifyPixelPass(png: [UInt8]) throws(VerificationError) -> PixelPassVerification {
        guard png.count <= Self.maximumPixelPassImageBytes else {
            throw .invalidRequest("pixelpass image: larger than \(Self.maximumPixelPassImageBytes) bytes")
        }
        let text: String
        do { text = try QRCodeReader.text(inPNG: png) } catch { throw .invalidRequest("pixelpass image: \(error)") }
        return try verifyPixelPass(text)
    }
}
