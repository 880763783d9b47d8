import HTTP
import JSON

extension VerifierRoutes {
    /// `POST <rp>/verify/pixelpass` (issue 22, item 7b): `{"pixelpass": "<scanned QR text>"}`, or
    /// the QR code itself as an `image/png` body, answered with the report (200, verified or
    /// refused). Text that is not PixelPass, and an image that is not a PNG or holds no QR code,
    /// is 400 `invalid_request` with the reason; other image types are 415 (docs/verifier.md).
    static func addPixelPassRoutes(_ verifier: Verifier, to router: inout Router<String>) {
        router.post("/verify/pixelpass", policy: .perClient) { _, request, _ in
            if let type = request.mediaType, type.hasPrefix("image/") {
                guard type == "image/png" else {
                    throw HTTPError.unsupportedMediaType(
                        "Content-Type \(type): QR images are read as image/png only; or send the code's text as application/json {\"pixelpass\": \"...\"}")
                }
                return .json(try verifier.verifyPixelPass(png: request.body).json)
            }
            let body = try request.jsonBody()
            guard let text = body["pixelpass"]?.stringValue else {
                throw VerificationError.invalidRequest("the body is a JSON object {\"pixelpass\": \"<the QR code's text>\"}")
            }
            return .json(try verifier.verifyPixelPass(text).json)
        }
    }
}
