/// The one place that writes JSON text: a streaming writer of compact (or, for people, indented)
/// UTF-8. `JSONValue`'s serializer is built on it, and response bodies sent on every request (the
/// token response, offers, credential responses, a wallet's proofs) are written through it member
/// by member, without a dictionary built and sorted first.
///
/// Members come out in the order they are written. A `JSONValue` object is written with sorted
/// keys (so two runs sign identical bytes); a body written member by member in sorted order is
/// therefore exactly the `bytes` of the matching value.
///
///     var w = JSONWriter()
///     w.openObject()
///     w.member("access_token", token)
///     w.member("expires_in", 600)
///     w.closeObject()
///     send(w.bytes)
///
/// Commas need no stack: a container that was just closed always leaves its parent non-empty,
/// so the writer only tracks whether the container being filled has had a member yet.
public struct JSONWriter {
    /// The text written so far.
    public internal(set) var bytes: [UInt8]
    private let pretty: Bool
    private var depth = 0
    /// No member or element in the open container yet: the next one takes no comma (and, when
    /// closing, the container is written `{}` / `[]`).
    private var first = true
    /// A member name was written and its value has not been: no separator before the value.
    private var afterName = false

    /// `pretty`: two-space indentation and `": "` after names, for people (the CLI, pages).
    public init(capacity: Int = 256, pretty: Bool = false) {
        bytes = []
        bytes.reserveCapacity(capacity)
        self.pretty = pretty
    }

    // MARK: Containers

    public mutating func openObject() { open(UInt8(ascii: "{")) }
    public mutating func closeObject() { close(UInt8(ascii: "}")) }
    public mutating func openArray() { open(UInt8(ascii: "[")) }
    public mutating func closeArray() { close(UInt8(ascii: "]")) }

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        depth += 1
        first = true
    }

    private mutating func close(_ bracket: UInt8) {
        precondition(depth > 0 && !afterName, "JSONWriter: a close without an open, or a member name without its value")
        depth -= 1
        if pretty && !first { newline() }
        bytes.append(bracket)
        first = false
    }

    // MARK: Values

    /// A member's name inside an object; its value is written next.
    public mutating func name(_ name: String) {
        separate()
        Self.writeString(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        if pretty { bytes.append(UInt8(ascii: " ")) }
        afterName = true
    }

    public mutating func string(_ value: String) {
        separate()
        Self.writeString(value, to: &bytes)
    }

    public mutating func int(_ value: Int64) {
        separate()
        bytes += String(value).utf8
    }

    public mutating func int(_ value: Int) { int(Int64(value)) }

    /// Integral values up to 10^15 as integers (`1.0` is written `1`), others in Swift's
    /// shortest round-trip form.
    public mutating func double(_ value: Double) {
        separate()
        if value.rounded() == value, abs(value) < 1e15 { bytes += String(Int64(value)).utf8 } else { bytes += "\(value)".utf8 }
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes += value ? Self.trueBytes : Self.falseBytes
    }

    public mutating func null() {
        separate()
        bytes += Self.nullBytes
    }

    /// A value serialized before (compact), copied in as it is: for large values made once and
    /// sent often, such as a persona's claims preview.
    public mutating func fragment(_ fragment: JSONFragment) {
        separate()
        bytes += fragment.text
    }

    /// A `JSONValue`, objects with sorted keys.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let b): bool(b)
        case .int(let i): int(i)
        case .double(let d): double(d)
        case .string(let s): string(s)
        case .array(let elements):
            openArray()
            for element in elements { self.value(element) }
            closeArray()
        case .object(let members):
            openObject()
            // Sorted with their values, so no key is hashed and looked up again.
            for member in members.sorted(by: { $0.key < $1.key }) {
                name(member.key)
                self.value(member.value)
            }
            closeObject()
        }
    }

    public mutating func strings(_ values: [String]) {
        openArray()
        for value in values { string(value) }
        closeArray()
    }

    // MARK: Members (a name and its value)

    public mutating func member(_ name: String, _ value: String) { self.name(name); string(value) }
    public mutating func member(_ name: String, _ value: Int64) { self.name(name); int(value) }
    public mutating func member(_ name: String, _ value: Int) { self.name(name); int(value) }
    public mutating func member(_ name: String, _ value: Bool) { self.name(name); bool(value) }
    public mutating func member(_ name: String, _ value: JSONValue) { self.name(name); self.value(value) }
    public mutating func member(_ name: String, _ value: JSONFragment) { self.name(name); fragment(value) }
    public mutating func member(_ name: String, strings values: [String]) { self.name(name); strings(values) }

    // MARK: Layout

    /// A comma before every member or element but the first of its container (and, pretty, a
    /// line break); nothing before a member's value.
    private mutating func separate() {
        if afterName { afterName = false; return }
        guard depth > 0 else { return }
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        if pretty { newline() }
    }

    private mutating func newline() {
        bytes.append(UInt8(ascii: "\n"))
        bytes += repeatElement(UInt8(ascii: " "), count: 2 * depth)
    }

    /// One value written, every container closed, compact.
    var isComplete: Bool { depth == 0 && !afterName && !pretty && !bytes.isEmpty }

    private static let nullBytes = Array("null".utf8)
    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
}

/// A JSON text serialized once, for the few large values a body copies in instead of writing
/// them again each time (a persona's 3 KB claims preview in the token response, prepared once per
/// persona and day; the offer object inside the admin API's answer). Made only from a value or a
/// finished writer, so it is always one whole compact JSON value, and a body that copies it is the
/// writer's own serialization (compact output does not depend on where a value is nested).
public struct JSONFragment: Sendable {
    public let text: [UInt8]

    public init(_ value: JSONValue) {
        text = value.bytes
    }

    /// What `writer` wrote: one complete compact value.
    public init(_ writer: JSONWriter) {
        precondition(writer.isComplete, "JSONFragment: the writer holds no complete value")
        text = writer.bytes
    }
}
