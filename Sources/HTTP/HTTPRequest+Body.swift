import Support
import JSON

extension HTTPRequest {
    /// The media type of the body (lower-cased, parameters dropped), nil without Content-Type.
    public var mediaType: String? { header("content-type").map(ASCII.mediaType) }

    /// The application/x-www-form-urlencoded body parsed (nil when the content type is not
    /// form); repeated names kept, in order.
    public func formParameters() -> [(name: String, value: String)]? {
        guard mediaType == "application/x-www-form-urlencoded" else { return nil }
        return body.withUnsafeBufferPointer { URLEncoding.pairs($0) }
    }

    /// The body parsed as JSON. The content type must be application/json (parameters such as
    /// charset allowed): accepting anything else would let a cross-site form post reach a JSON
    /// endpoint without a CORS preflight.
    public func jsonBody() throws(HTTPError) -> JSONValue {
        guard let mediaType else {
            throw .unsupportedMediaType("missing Content-Type; expected application/json")
        }
        guard mediaType == "application/json" else {
            throw .unsupportedMediaType("Content-Type \(mediaType) is not application/json")
        }
        do {
            return try JSONValue.parse(body)
        } catch {
            throw .badRequest("request body is not valid JSON: \(error)")
        }
    }
}
