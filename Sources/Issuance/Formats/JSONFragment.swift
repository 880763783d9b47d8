import JSON

/// A JSON value with its serialized text, made once, for the few large values a response body
/// copies in instead of writing them through the JSON writer each time: the token response's
/// 3 KB claims preview (prepared once per persona and day, `PreparedClaims`), written around by
/// `TokenResponseBody`. The text is exactly `value.bytes` (compact output does not depend on
/// nesting), so a body that copies it is the writer's own serialization.
struct JSONFragment: Sendable {
    let value: JSONValue
    let text: [UInt8]

    init(_ value: JSONValue) {
        self.value = value
        text = value.bytes
    }
}
