import JSON

/// The members of a JSON object the wallet reads from a response (`JSONValue.parseObject(_:keeping:)`):
/// the rest is checked as `JSONValue.parse` checks it, so a response malformed in any member is
/// refused, but not built. A token response carries `credential_previews` (3.7 KB: every claim of
/// the PID, a portrait among them) that the wallet never reads.
public struct ResponseJSON: Sendable {
    public let names: Set<String>

    public init(_ names: String...) { self.names = Set(names) }

    /// The document's kept members, or nil when `bytes` is not one valid JSON object, as
    /// `(try? JSONValue.parse(bytes))?.objectValue` is nil.
    public func object(_ bytes: [UInt8]) -> [String: JSONValue]? {
        try? JSONValue.parseObject(bytes, keeping: names)
    }
}
