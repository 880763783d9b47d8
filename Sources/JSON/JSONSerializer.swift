extension JSONValue {
    /// Compact serialization with sorted object keys and no escaped slashes, so URLs in
    /// statements read as they are and two runs sign identical bytes.
    public func serialized(pretty: Bool = false) -> String {
        String(decoding: encoded(pretty: pretty), as: UTF8.self)
    }

    public var bytes: [UInt8] { encoded(pretty: false) }

    /// The UTF-8 bytes of `serialized(pretty:)`, written by `JSONWriter`.
    public func encoded(pretty: Bool = false) -> [UInt8] {
        var writer = JSONWriter(pretty: pretty)
        writer.value(self)
        return writer.bytes
    }

    /// Appends the compact serialization (the bytes of `bytes`) to `out`, for a caller that
    /// assembles a larger text around values (an SD-JWT disclosure) without a buffer per value.
    public func encode(appendingTo out: inout [UInt8]) {
        var writer = JSONWriter(capacity: 0)
        swap(&writer.bytes, &out)
        writer.value(self)
        swap(&writer.bytes, &out)
    }

    /// Appends `string` as a JSON string (quoted and escaped exactly as the writer writes it).
    public static func encodeString(_ string: String, appendingTo out: inout [UInt8]) {
        JSONWriter.writeString(string, to: &out)
    }

    /// Whether the string is written as itself between quotes: no quote, backslash or control
    /// character (RFC 8259 §7). Callers that assemble JSON around long plain values (compact
    /// JWTs, base64url) test with this instead of copying them through the writer.
    public static func needsNoEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        JSONWriter.needsNoEscape(bytes)
    }

    public static func needsNoEscape(_ s: String) -> Bool {
        JSONWriter.needsNoEscape(s)
    }

    /// `{"name":"value",...}`, the bytes `JSONValue.object` of these string members serializes
    /// to, for members given in the serializer's order (sorted by name); nil when a name or a
    /// value needs an escape. For small fixed objects built per signature (a JWS header, an
    /// RFC 7638 thumbprint input) without making a dictionary and sorting it; the nil lets a
    /// caller keep its general path for the odd input.
    public static func plainStringObject(_ members: [(name: String, value: String)]) -> [UInt8]? {
        assert(zip(members, members.dropFirst()).allSatisfy { $0.name < $1.name }, "members must be sorted by name")
        var writer = JSONWriter(capacity: members.reduce(2) { $0 + $1.name.utf8.count + $1.value.utf8.count + 6 })
        writer.openObject()
        for member in members {
            guard needsNoEscape(member.name), needsNoEscape(member.value) else { return nil }
            writer.member(member.name, member.value)
        }
        writer.closeObject()
        return writer.bytes
    }
}

extension JSONValue: CustomStringConvertible {
    public var description: String { serialized() }
}
