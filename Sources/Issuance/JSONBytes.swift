import JSON

/// A compact JSON text written in order, for response bodies sent on every issuance (the admin
/// offer, the token response) without building a `JSONValue` and serializing it. The caller
/// names members in the serializer's order (sorted by key) so the bytes are those of
/// `JSONValue.bytes`; strings go through `JSONValue.encodeString`, so escapes are the
/// serializer's own. Each user keeps a test that compares the two.
struct JSONBytes {
    private(set) var bytes: [UInt8] = []
    /// Bit n: the container open at depth n already holds a member or element, so the next one
    /// needs a comma (the bodies written here nest a few levels, far below the 62 a word allows).
    private var filled: UInt64 = 0
    private var depth = 0
    /// Set by `member(_:)`: the next value is that member's, so no comma goes before it.
    private var valuePending = false

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    mutating func open() { push(UInt8(ascii: "{")) }
    mutating func close() { pop(UInt8(ascii: "}")) }
    mutating func openArray() { push(UInt8(ascii: "[")) }
    mutating func closeArray() { pop(UInt8(ascii: "]")) }

    /// A member's name; its value follows (`open`, `raw`, `string`, ...).
    mutating func member(_ name: String) {
        separate()
        JSONValue.encodeString(name, appendingTo: &bytes)
        bytes.append(UInt8(ascii: ":"))
        valuePending = true
    }

    mutating func member(_ name: String, _ value: String) { member(name); string(value) }
    mutating func member(_ name: String, _ value: Int64) { member(name); raw(Array(String(value).utf8)) }

    mutating func string(_ value: String) {
        separate()
        JSONValue.encodeString(value, appendingTo: &bytes)
    }

    mutating func stringArray(_ values: [String]) {
        openArray()
        for value in values { string(value) }
        closeArray()
    }

    /// A value already serialized (by the JSON writer or another `JSONBytes`).
    mutating func raw(_ text: [UInt8]) {
        separate()
        bytes += text
    }

    private mutating func push(_ bracket: UInt8) {
        separate()
        precondition(depth < 63, "JSONBytes nests at most 62 levels")
        bytes.append(bracket)
        depth += 1
        filled &= ~(1 << UInt64(depth))
    }

    private mutating func pop(_ bracket: UInt8) {
        precondition(depth > 0 && !valuePending, "JSONBytes: close without open, or a member without its value")
        depth -= 1
        bytes.append(bracket)
    }

    /// A comma before every member or element but the first of its container.
    private mutating func separate() {
        if valuePending { valuePending = false; return }
        guard depth > 0 else { return }
        let bit: UInt64 = 1 << UInt64(depth)
        if filled & bit != 0 { bytes.append(UInt8(ascii: ",")) }
        filled |= bit
    }
}
