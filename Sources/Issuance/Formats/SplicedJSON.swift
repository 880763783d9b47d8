import JSON

/// A JSON response body whose few large values are serialized once (or, for strings that need
/// no escape, not at all) and copied into the small rest. The token response carries a 3 KB
/// claims preview (prepared once per persona and day; the credential response, whose shape is
/// fixed, is written directly: `PIDProvider.credentialsBody`); copying them instead of writing them through the JSON writer took the server from
/// 3.972M to 3.907M instructions per SD-JWT flow (callgrind, issuance-callgrind.sh, the
/// credential response's serialization alone was 76,000). The bytes are exactly `value.bytes`: the
/// rest is serialized by the JSON writer around markers, and a fragment's text is its value's
/// own serialization (compact output does not depend on nesting).
struct SplicedJSON {
    /// One value and its JSON text.
    struct Fragment: Sendable {
        let value: JSONValue
        let text: [UInt8]

        init(_ value: JSONValue) {
            self.value = value
            text = value.bytes
        }

        /// A string that is expected to need no escape (a compact JWS or SD-JWT, base64url):
        /// quoted as it is when it indeed needs none, else serialized by the JSON writer.
        init(string: String) {
            value = .string(string)
            guard JSONValue.needsNoEscape(string) else {
                text = value.bytes
                return
            }
            var quoted: [UInt8] = []
            quoted.reserveCapacity(string.utf8.count + 2)
            quoted.append(UInt8(ascii: "\""))
            quoted += string.utf8
            quoted.append(UInt8(ascii: "\""))
            text = quoted
        }
    }

    let fragments: [Fragment]
    /// The body with the given values where the fragments go, in the fragments' order.
    let template: ([JSONValue]) -> JSONValue

    /// The body as a JSON value (the fragments' values in place).
    var value: JSONValue { template(fragments.map(\.value)) }

    /// `value.bytes`, with the fragments copied in.
    var bytes: [UInt8] {
        guard !fragments.isEmpty else { return template([]).bytes }
        // Markers no body value contains: a control character makes the writer escape it, so
        // its serialized form is found only where the marker was placed (checked: exactly once).
        let markers = fragments.indices.map { JSONValue.string("\u{1}spliced \($0)\u{1}") }
        let rest = template(markers).bytes
        // Each marker's text made once: the writer's escape of \u{1} made it ~2,300
        // instructions a marker, and it was made twice (callgrind, issuance-callgrind.sh).
        let markerTexts = markers.map(\.bytes)
        var positions: [Int] = []
        for marker in markerTexts {
            let found = Self.occurrences(of: marker, in: rest)
            guard found.count == 1 else { return value.bytes }
            positions.append(found[0])
        }
        let order = positions.indices.sorted { positions[$0] < positions[$1] }
        var out: [UInt8] = []
        out.reserveCapacity(rest.count + fragments.reduce(0) { $0 + $1.text.count })
        var from = 0
        for i in order {
            out += rest[from..<positions[i]]
            out += fragments[i].text
            from = positions[i] + markerTexts[i].count
        }
        out += rest[from...]
        return out
    }

    private static func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> [Int] {
        guard needle.count <= haystack.count, let first = needle.first else { return [] }
        var found: [Int] = []
        var i = 0
        while i + needle.count <= haystack.count {
            if haystack[i] == first, haystack[i..<(i + needle.count)].elementsEqual(needle) { found.append(i) }
            i += 1
        }
        return found
    }
}
