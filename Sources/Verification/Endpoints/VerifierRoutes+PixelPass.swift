import HTTP
import JSON

extension VerifierRoutes {
    /// `POST <rp>/verify/pixelpass` (issue 22, item 7b): `{"pixelpass": "<scanned QR text>"}`,
    /// answered with the report (200, verified or refused). Text that is not PixelPass is 400
    /// `invalid_request` with the reason. A QR image is refused with a pointer to the text form:
    /// the server's stack has no QR decoder (libqrencode only encodes; docs/verifier.md).
    static func addPixelPassRoutes(_ verifier: Verifier, to router: inout Router<String>) {
        router.post("/verify/pixelpass", policy: .perClient) { _, request, _ in
            if let type = request.mediaType, type.hasPrefix("image/") {
                throw HTTPError.unsupportedMediaType(
                    "QR images are not decoded here (no QR decoder in the server's stack); scan the code and send its text as application/json {\"pixelpass\": \"...\"}")
            }
            let body = try request.jsonBody()
            guard let text = body["pixelpass"]?.stringValue else {
                throw VerificationError.invalidRequest("the body is a JSON object {\"pixelpass\": \"<the QR code's text>\"}")
            }
            return .json(try verifier.verifyPixelPass(text).json)
        }
    }
}
