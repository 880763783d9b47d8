/// A bad field in a decoded CBOR structure, named by its path from the root
/// (e.g. `issuerAuth.payload.valueDigests: expected a map, got array`).
public struct CBORFieldError: Error, Equatable, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { path.isEmpty ? reason : "\(path): \(reason)" }
}

/// A value at a known path, with typed accessors that throw a `CBORFieldError` naming that
/// path. Decode once into typed structs with these, so every rejection says which field.
public struct CBORField: Sendable {
    public let value: CBORValue
    public let path: String

    /// `path` names the root in errors (e.g. "issuerAuth"); empty for an anonymous root.
    public init(_ value: CBORValue, path: String = "") {
        self.value = value
        self.path = path
    }

    public func error(_ reason: String) -> CBORFieldError { CBORFieldError(path: path, reason: reason) }

    private func expected(_ what: String) -> CBORFieldError { error("expected \(what), got \(value.typeName)") }

    public func text() throws(CBORFieldError) -> String {
        guard let s = value.textValue else { throw expected("a text string") }
        return s
    }

    public func bytes() throws(CBORFieldError) -> [UInt8] {
        guard let b = value.bytesValue else { throw expected("a byte string") }
        return b
    }

    public func int() throws(CBORFieldError) -> Int64 {
        guard let i = value.intValue else { throw expected("an integer") }
        return i
    }

    public func uint() throws(CBORFieldError) -> UInt64 {
        guard let u = value.uintValue else { throw expected("an unsigned integer") }
        return u
    }

    public func bool() throws(CBORFieldError) -> Bool {
        guard let b = value.boolValue else { throw expected("a boolean") }
        return b
    }

    public func map() throws(CBORFieldError) -> CBORMapReader {
        guard let entries = value.mapValue else { throw expected("a map") }
        return CBORMapReader(entries: entries, path: path)
    }

    /// Elements as fields whose paths end in `[index]`.
    public func array() throws(CBORFieldError) -> [CBORField] {
        guard let a = value.arrayValue else { throw expected("an array") }
        return a.enumerated().map { CBORField($1, path: path + "[\($0)]") }
    }

    /// The content of tag `tag`, at the same path.
    public func tagged(_ tag: UInt64) throws(CBORFieldError) -> CBORField {
        guard case .tagged(tag, let inner) = value else { throw expected("tag \(tag)") }
        return CBORField(inner, path: path)
    }

    /// The item inside a tag-24 byte string, decoded strictly, at the same path.
    public func embedded() throws(CBORFieldError) -> CBORField {
        guard value.embeddedBytes != nil else { throw expected("an embedded CBOR item (tag 24 byte string)") }
        do {
            return CBORField(try value.embeddedValue()!, path: path)
        } catch {
            throw self.error("embedded CBOR: \(error)")
        }
    }

    public func dateTime() throws(CBORFieldError) -> Int64 {
        guard let t = value.dateTimeValue else { throw expected("a tdate (tag 0 RFC 3339 text)") }
        return t
    }

    public func fullDate() throws(CBORFieldError) -> CBORFullDate {
        guard let d = value.fullDateValue else { throw expected("a full-date (tag 1004 YYYY-MM-DD text)") }
        return d
    }
}

/// A map being read field by field. Keys are data items (text for mdoc, integers for COSE
/// labels); paths join them with dots.
public struct CBORMapReader: Sendable {
    public let entries: [CBORMapEntry]
    public let path: String

    public init(entries: [CBORMapEntry], path: String) {
        self.entries = entries
        self.path = path
    }

    public var keys: [CBORValue] { entries.map(\.key) }

    public func contains(_ key: CBORValue) -> Bool { entries.contains { $0.key == key } }

    public func optional(_ key: CBORValue) -> CBORField? {
        guard let entry = entries.first(where: { $0.key == key }) else { return nil }
        return CBORField(entry.value, path: childPath(key))
    }

    public func required(_ key: CBORValue) throws(CBORFieldError) -> CBORField {
        guard let field = optional(key) else { throw CBORFieldError(path: childPath(key), reason: "missing") }
        return field
    }

    /// Every entry, its value as a field at `path.key`.
    public func fields() -> [(key: CBORValue, field: CBORField)] {
        entries.map { ($0.key, CBORField($0.value, path: childPath($0.key))) }
    }

    /// Text keys print as they are, integer keys as numbers, anything else in brackets.
    func childPath(_ key: CBORValue) -> String {
        let name: String
        switch key {
        case .text(let s): name = s
        case .unsigned, .negative: name = String(key.intValue.map(String.init) ?? "?")
        default: name = "<\(key.typeName)>"
        }
        return path.isEmpty ? name : path + "." + name
    }
}
