import Support
import JSON

/// Request bodies. A body of the wrong media type is 415 `invalid_request` (the client sent the
/// wrong kind of thing; RFC 9110 §15.5.16), a malformed one 400 `invalid_request`; both are
/// `HTTPError`s, which render themselves when a handler throws them.
extension HTTPRequest {
    /// The media type of the body (lower-cased, parameters dropped), nil without Content-Type.
    public var mediaType: String? { header("content-type").map(ASCII.mediaType) }

    /// The application/x-www-form-urlencoded body parsed (nil when the content type is not
    /// form); repeated names kept, in order.
    public func formParameters() -> [(name: String, value: String)]? {
        guard mediaType == "application/x-www-form-urlencoded" else { return nil }
        return body.withUnsafeBufferPointer { URLEncoding.pairs($0) }
    }

    /// The application/x-www-form-urlencoded body (charset parameter allowed) as `Parameters`.
    /// Form decoding keeps malformed escapes literally (WHATWG), so only the type can be wrong.
    public func formBody() throws(HTTPError) -> Parameters {
        // An empty body has no media type (clients send no Content-Type with it); it is an empty
        // form, so a missing parameter is reported as such rather than as a media type problem.
        if body.isEmpty && header("content-type") == nil { return Parameters(pairs: []) }
        try requireMediaType("application/x-www-form-urlencoded")
        return Parameters(encoded: body)
    }

    /// The body parsed as JSON. The content type must be application/json (parameters such as
    /// charset allowed): accepting anything else would let a cross-site form post reach a JSON
    /// endpoint without a CORS preflight.
    public func jsonBody() throws(HTTPError) -> JSONValue {
        try requireMediaType("application/json")
        do {
            return try JSONValue.parse(body)
        } catch {
            throw .badRequest("request body is not valid JSON: \(error)")
        }
    }

    private func requireMediaType(_ expected: String) throws(HTTPError) {
        guard let mediaType else {
            throw .unsupportedMediaType("missing Content-Type; expected \(expected)")
        }
        guard mediaType == expected else {
            throw .unsupportedMediaType("Content-Type \(mediaType) is not \(expected)")
        }
    }
}
